"""Finding a visitor's session again after a reload.

Gradio keeps a visitor's `gr.State` per page load: a reload is a new Gradio
session with a fresh `Session`, while the old one lives on in the server until
it expires. So the page keeps its session's id in the browser
(`gr.BrowserState`), and on load the `SessionRegistry` looks it up:

- found, and no other open tab shows it: this tab adopts it (the run, the
  scoreboard, the downloads come back, a run still streaming goes on streaming);
- found, but another open tab shows it (the id is shared by a browser's tabs):
  this tab starts its own session;
- not found (it expired, or the server restarted): this tab starts a new
  session and says that the old one is gone.

The registry holds sessions weakly and never keeps one alive: a session that
has ended (`Session.closed`) or been dropped is simply not found, however it
ended, so an expired session is reported, never crashed on. A tab "shows" a
session from its page load until Gradio's unload event for it (`detach`).
No Gradio import.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .session import Session

RESTORED = "Restored after the reload: the server still held this session."
RESTORED_SETUP = (
    "Restored after the reload: the server still held this session, and the page is set up as you left it "
    "(models and endpoints, Verdicts by, the prompt set, splits, size, seed and generation settings). "
    "Not kept: text typed but not yet used (Custom prompt, a follow-up's own words, the Add a model and "
    "publish boxes) and the prompt set's preview."
)
RESTORED_LINK = (
    "Restored after the reload: the server still held this session (its runs, scoreboard and downloads); "
    "the set-up is the one of the link you opened."
)
EXPIRED = (
    "Your previous session has ended on the server (sessions expire when left alone, and a restart ends them): "
    "this is a new one. Downloads from before are gone; run again to get new ones."
)
ELSEWHERE = "This session is open in another tab, so this tab starts a session of its own."


class SessionRegistry:
    """Live sessions by their id (kept in the visitor's browser) and by the tab showing them."""

    def __init__(self) -> None:
        self._by_id: weakref.WeakValueDictionary[str, Session] = weakref.WeakValueDictionary()
        self._by_tab: weakref.WeakValueDictionary[str, Session] = weakref.WeakValueDictionary()
        self._released: dict[str, asyncio.Event] = {}
        """Page loads waiting for a session's tab to let go (by session id)."""

    async def wait_released(self, sess: Session, tab: str, wait_s: float) -> bool:
        """True once no tab but `tab` shows `sess` (at once, or when the showing tab's
        unload arrives within `wait_s` seconds: a reload); False if it stays shown."""
        if sess.tab in ("", tab):
            return True
        event = self._released.setdefault(sess.sid, asyncio.Event())
        try:
            async with asyncio.timeout(wait_s):
                await event.wait()
        except TimeoutError:
            pass
        finally:
            self._released.pop(sess.sid, None)
        return sess.tab in ("", tab) and not sess.closed

    def find(self, sid: object) -> Session | None:
        """The live session with this id; None when there is none (never was, ended, or dropped)."""
        if not isinstance(sid, str) or not sid:
            return None
        sess = self._by_id.get(sid)
        return sess if sess is not None and not sess.closed else None

    def attach(self, sess: Session, tab: str) -> None:
        """`tab` (a Gradio session hash) now shows `sess`."""
        if sess.tab and self._by_tab.get(sess.tab) is sess:
            del self._by_tab[sess.tab]
        sess.tab = tab
        self._by_id[sess.sid] = sess
        if tab:
            self._by_tab[tab] = sess

    def detach(self, tab: str) -> Session | None:
        """The tab closed or reloaded: its session is free to be adopted by the next page load."""
        sess = self._by_tab.pop(tab, None) if tab else None
        if sess is not None and sess.tab == tab:
            sess.tab = ""
            released = self._released.get(sess.sid)
            if released is not None:
                released.set()
        return sess

    def __len__(self) -> int:
        return len(self._by_id)
