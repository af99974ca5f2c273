"""`checked_call`: a write method whose missing or unknown argument is the contract's ``BAD_ARGS``
naming it, not a ``TypeError``. Used on each `WriteApi` write and on the `Session`
writes that run them."""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

from ..errors import bad_args

__all__ = ["checked_call"]

Method = TypeVar("Method", bound=Callable[..., Awaitable[Any]])

_ARGUMENT = re.compile(r"argument:? '?([A-Za-z_][A-Za-z0-9_]*)'?")


def checked_call(method: Method) -> Method:
    """``method`` with its arguments bound first: a missing or unknown argument is the contract's
    ``BAD_ARGS`` naming it, not a ``TypeError``. Signature and docstring stay."""
    signature = inspect.signature(method)
    params = list(signature.parameters.values())[1:]
    accepted = frozenset(p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY)
    required = frozenset(
        p.name
        for p in params
        if p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is inspect.Parameter.empty
    )

    @functools.wraps(method)
    async def checked(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not args and required <= kwargs.keys() <= accepted:  # fits: no binding needed
            return await method(self, **kwargs)
        try:
            signature.bind(self, *args, **kwargs)
        except TypeError as exc:
            found = _ARGUMENT.search(str(exc))
            raise bad_args(found.group(1) if found else "arguments", str(exc)) from None
        return await method(self, *args, **kwargs)

    return cast(Method, checked)
