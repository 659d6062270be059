"""The page's start-up check waits for a slow first answer, where Gradio's
gives up on its first timeout and the server fails to start (seen in a loaded
test run: "When localhost is not accessible, a shareable link must be created")."""

from __future__ import annotations

import http.server
import threading
import time

import pytest
from support import free_port

from orbench_play.ui import launching


class _SlowFirstAnswer(http.server.BaseHTTPRequestHandler):
    """Answers HEAD with 200, the first one only after `delay_s` (a page whose
    first render is slow on a busy machine)."""

    delay_s = 0.0
    seen = 0

    def do_HEAD(self):
        type(self).seen += 1
        if type(self).seen == 1:
            time.sleep(self.delay_s)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def slow_server():
    _SlowFirstAnswer.seen = 0
    _SlowFirstAnswer.delay_s = 1.0
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), _SlowFirstAnswer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()


def test_a_first_answer_slower_than_one_try_is_waited_for(slow_server):
    assert launching.page_answers(slow_server, within_s=30, try_s=0.2)
    assert _SlowFirstAnswer.seen >= 2  # the first try timed out and the check tried again


def test_a_page_that_never_answers_fails_the_check():
    assert not launching.page_answers(f"http://127.0.0.1:{free_port()}/", within_s=0.5, try_s=0.2)


def test_launch_uses_the_patient_check_only_while_it_launches():
    from gradio import networking

    before = networking.url_ok
    seen = {}

    class FakeDemo:
        def launch(self, **kwargs):
            seen["check"] = networking.url_ok
            seen["kwargs"] = kwargs

    launching.launch(FakeDemo(), server_name="127.0.0.1", server_port=7999, quiet=True)
    assert seen["check"] is launching.page_answers
    assert networking.url_ok is before
    assert seen["kwargs"]["prevent_thread_lock"] is True and seen["kwargs"]["quiet"] is True
    assert "state_session_capacity" in seen["kwargs"]  # the page's own settings go with it
