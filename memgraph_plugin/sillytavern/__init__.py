"""The SillyTavern extension (``extension/``: manifest, module scripts, styles) shipped with the
package, and ``memgraph-host sillytavern install USER_DIR`` that copies it into a SillyTavern
user's extensions folder (``docs/sillytavern.md``)."""
