"""Driving SillyTavern's own UI with Playwright: send a message, regenerate, swipe, edit, delete
and branch, each waiting for SillyTavern (and the memory extension's queued calls) to finish."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, Page
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from .memory_server import TOKEN, MemoryServer
from .sillytavern_app import SillyTavern

TIMEOUT_MS = 60_000
#: how long a send may take to be taken before its button is pressed again
SEND_TAKEN_MS = 10_000
#: SillyTavern is idle: no generation running, the send button back
IDLE = """() => {
    const shown = id => { const e = document.getElementById(id);
                          return !!e && getComputedStyle(e).display !== 'none'; };
    return shown('send_but') && !shown('mes_stop');
}"""
#: what a failure message shows of the page: SillyTavern's connection, its chat and send box, and
#: the extension's queued calls
PAGE_STATE = """() => {
    const c = SillyTavern.getContext();
    const shown = id => { const e = document.getElementById(id);
                          return !!e && getComputedStyle(e).display !== 'none'; };
    return { online: c.onlineStatus, chat: c.chat.length, chat_file: c.getCurrentChatId(),
             box: document.querySelector('#send_textarea').value,
             send_shown: shown('send_but'), stop_shown: shown('mes_stop'),
             memgraph_pending: globalThis.memgraphMemory?.pending() };
}"""
CONNECTED = "() => SillyTavern.getContext().onlineStatus !== 'no_connection'"


def open_chat_page(
    browser: Browser,
    sillytavern: SillyTavern,
    server: MemoryServer,
    custom_url: str,
    context_tokens: int,
) -> tuple[BrowserContext, ChatPage]:
    """SillyTavern's page with Chat Completion (Custom) at `custom_url`: the memory server's
    `/v1` for proxy mode, the upstream itself for direct mode; the extension set up for
    `server`. The browser context is the caller's to close."""
    sillytavern.write_settings(
        firstRun=False, main_api="openai",
        power_user={"auto_connect": True},
        oai_settings={
            "chat_completion_source": "custom", "custom_url": custom_url,
            "custom_model": "tiny", "openai_max_context": context_tokens,
            "openai_max_tokens": 60, "stream_openai": False,
        },
        extension_settings={"memgraph-memory": {
            "url": server.url, "token": TOKEN, "mode": "auto"}},
    )  # fmt: skip
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(sillytavern.url)
    page.wait_for_function("() => globalThis.memgraphMemory !== undefined", timeout=120_000)
    chat = ChatPage(page)
    chat.describe_servers = lambda: (
        "memory server:\n" + server.log_tail() + "SillyTavern:\n" + "".join(sillytavern.lines[-20:])
    )
    chat.connect()
    return context, chat


class ChatPage:
    def __init__(self, page: Page) -> None:
        self.page = page
        self.console: list[str] = []  # the page's warnings and errors, for a failure's message
        #: the servers' side of a failure's message (set by the test: logs, requests received)
        self.describe_servers: Callable[[], str] = lambda: ""
        page.on("console", self._console)

    def connect(self) -> None:
        """Wait for SillyTavern's API connection (auto-connect at load); a check that failed is
        tried again with the Connect button, as a user would. SillyTavern drops a send silently
        while it is not connected."""
        for _ in range(3):
            try:
                self.page.wait_for_function(CONNECTED, timeout=TIMEOUT_MS // 3)
                return
            except PlaywrightTimeout:
                self.page.evaluate("() => $('#api_button_openai').trigger('click')")
        raise AssertionError("SillyTavern did not connect to its API:\n" + self.failure_state())

    def failure_state(self) -> str:
        """The page's state, its last warnings and errors, and the servers' side."""
        lines = [f"page: {self.evaluate(PAGE_STATE)}", *self.console[-20:]]
        return "\n".join([*lines, self.describe_servers()])

    def _console(self, message: ConsoleMessage) -> None:
        if message.type in ("warning", "error"):
            self.console.append(f"{message.type}: {message.text[:400]}")

    def evaluate(self, script: str, arg: Any = None) -> Any:
        return self.page.evaluate(script, arg)

    def chat(self) -> list[dict[str, Any]]:
        """SillyTavern's message list (name, is_user, mes, swipe_id)."""
        return self.evaluate("""() => SillyTavern.getContext().chat.map(m => ({
            name: m.name, is_user: !!m.is_user, mes: m.mes, swipe_id: m.swipe_id ?? 0}))""")

    def memory_chat_id(self) -> str:
        return self.evaluate("() => SillyTavern.getContext().chatMetadata.memgraph?.id ?? ''")

    def settle(self) -> None:
        """Wait for SillyTavern to be idle and the extension's calls to be done."""
        self.page.wait_for_function(IDLE, timeout=TIMEOUT_MS)
        self.evaluate("() => globalThis.memgraphMemory?.idle()")

    def open_character(self, name: str) -> None:
        self.page.wait_for_function(
            "name => SillyTavern.getContext().characters.some(c => c.name === name)",
            arg=name, timeout=TIMEOUT_MS,
        )  # fmt: skip
        self.evaluate(
            """async name => {
                const context = SillyTavern.getContext();
                const id = context.characters.findIndex(c => c.name === name);
                await context.selectCharacterById(String(id));
            }""",
            name,
        )
        self._loaded()

    def _loaded(self) -> None:
        """Wait for the chat SillyTavern opens to be loaded: shown, and its CHAT_CHANGED handled
        by the extension (which keeps the memory identity in the chat's metadata then); a send
        before that meets a chat still loading."""
        self.page.wait_for_function(
            """() => { const c = SillyTavern.getContext();
                return c.characterId !== undefined && c.chat.length > 0
                    && c.chatMetadata?.memgraph?.file === c.getCurrentChatId()
                    && document.querySelector('#chat .last_mes')?.getAttribute('mesid')
                        === String(c.chat.length - 1); }""",
            timeout=TIMEOUT_MS,
        )  # fmt: skip
        self.settle()

    def send(self, text: str) -> str:
        """Type a message, send it and wait for the answer; the answer."""
        before = self.start_send(text)
        self.wait_answer(text, before)
        return self.chat()[-1]["mes"]

    def start_send(self, text: str) -> int:
        """Type a message and send it, not waiting for the answer; the chat's length before."""
        before = len(self.chat())
        self.page.fill("#send_textarea", text)
        for _ in range(3):  # SillyTavern clears the box when it takes a send; a busy page may not
            self.page.click("#send_but")
            try:
                self.page.wait_for_function(
                    "() => document.querySelector('#send_textarea').value === ''",
                    timeout=SEND_TAKEN_MS,
                )
                break
            except PlaywrightTimeout:
                continue
        return before

    def wait_answer(self, text: str, before: int) -> None:
        """Wait for the answer to `text`, sent when the chat had `before` messages."""
        try:
            self.page.wait_for_function(
                "n => SillyTavern.getContext().chat.length >= n + 2", arg=before,
                timeout=2 * TIMEOUT_MS,
            )  # fmt: skip
        except PlaywrightTimeout:
            raise AssertionError(f"no answer to {text!r}:\n{self.failure_state()}") from None
        self.settle()

    def regenerate(self) -> str:
        old = self.chat()[-1]["mes"]
        self.page.click("#options_button")
        self.page.click("#option_regenerate")
        self._changed(old)
        return self.chat()[-1]["mes"]

    def swipe(self) -> str:
        old = self.chat()[-1]["mes"]
        self.page.locator("#chat .last_mes .swipe_right").click()
        self._changed(old)
        return self.chat()[-1]["mes"]

    def _changed(self, old: str) -> None:
        """Wait for the new answer: the last message is a character's again, with other text
        than `old`, and SillyTavern is idle (a regenerate first removes the old answer, leaving
        the user's message last; a swipe shows "..." meanwhile)."""
        self.page.wait_for_function(
            """old => { const c = SillyTavern.getContext().chat;
                const last = c[c.length - 1];
                return !last.is_user && last.mes !== old && last.mes !== '...'
                    && (""" + IDLE + """)(); }""",
            arg=old, timeout=TIMEOUT_MS,
        )  # fmt: skip
        self.settle()

    def _seen(self, event: str) -> int:
        """How many times SillyTavern has emitted `event` (a MESSAGE_* name) since counting began.
        The counting listener is added after the extension's, so SillyTavern calls it after the
        extension's handler: a new count means the extension has queued its call."""
        return int(
            self.evaluate(
                """event => {
                    const { eventSource, eventTypes } = SillyTavern.getContext();
                    const seen = globalThis.memgraphTestSeen ??= {};
                    if (!(event in seen)) {
                        seen[event] = 0;
                        eventSource.on(eventTypes[event], () => { seen[event] += 1; });
                    }
                    return seen[event];
                }""",
                event,
            )
        )

    def _wait_seen(self, event: str, before: int) -> None:
        self.page.wait_for_function(
            "([event, n]) => globalThis.memgraphTestSeen[event] > n", arg=[event, before],
            timeout=TIMEOUT_MS,
        )  # fmt: skip

    def edit(self, index: int, text: str, *, settle: bool = True) -> None:
        """Edit message `index` in its editor; `settle=False`: while an answer is being
        generated, not waiting for it."""
        seen = self._seen("MESSAGE_EDITED")
        message = self.page.locator(f'#chat .mes[mesid="{index}"]')
        message.scroll_into_view_if_needed()
        message.hover()
        message.locator(".mes_edit").click()
        message.locator(".edit_textarea").fill(text)
        message.locator(".mes_edit_done").click()
        self.page.wait_for_function(
            "([i, t]) => SillyTavern.getContext().chat[i].mes === t", arg=[index, text],
            timeout=TIMEOUT_MS,
        )  # fmt: skip
        self._wait_seen("MESSAGE_EDITED", seen)
        if settle:
            self.settle()

    def delete(self, index: int) -> None:
        """Delete one message (its editor's delete button, confirmed)."""
        before = len(self.chat())
        seen = self._seen("MESSAGE_DELETED")
        message = self.page.locator(f'#chat .mes[mesid="{index}"]')
        message.scroll_into_view_if_needed()
        message.hover()
        message.locator(".mes_edit").click()
        message.locator(".mes_edit_delete").click()
        self.page.locator("dialog.popup[open] .popup-button-ok").click()
        self.page.wait_for_function(
            "n => SillyTavern.getContext().chat.length === n - 1", arg=before, timeout=TIMEOUT_MS
        )
        self._wait_seen("MESSAGE_DELETED", seen)
        self.settle()

    def branch(self) -> None:
        """Branch the chat at its last message (the message's "Create branch" button)."""
        old = self.evaluate("() => SillyTavern.getContext().getCurrentChatId()")
        last = self.page.locator("#chat .last_mes")
        last.hover()
        last.locator(".extraMesButtonsHint").click()
        last.locator(".mes_create_branch").click()
        self.page.wait_for_function(
            "old => SillyTavern.getContext().getCurrentChatId() !== old", arg=old,
            timeout=TIMEOUT_MS,
        )  # fmt: skip
        self._loaded()

    def screenshot_settings(self, path: str) -> None:
        """The Extensions drawer with the memory extension's settings open."""
        self.page.locator("#extensions-settings-button .drawer-toggle").click()
        drawer = self.page.locator(".memgraph-settings")
        drawer.locator(".inline-drawer-toggle").click()
        drawer.locator("#memgraph_url").wait_for(state="visible")
        drawer.scroll_into_view_if_needed()
        self.page.screenshot(path=path)
        self.page.locator("#extensions-settings-button .drawer-toggle").click()
