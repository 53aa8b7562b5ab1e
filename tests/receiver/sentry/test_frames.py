"""receiver/sentry/frames.py: which frame grouping reads."""

from __future__ import annotations

from receiver.sentry.frames import top_frame


def test_the_innermost_in_app_frame_is_read_when_frames_say_so() -> None:
    frames = [{"function": "view", "in_app": True}, {"function": "helper", "in_app": True},
              {"function": "decode", "in_app": False}]
    assert top_frame(frames) == frames[1]


def test_without_in_app_marks_library_paths_are_passed_over() -> None:
    # A browser SDK may mark nothing: then the paths decide, as for a text traceback.
    frames = [{"function": "fetchUser", "abs_path": "/app/users.js"},
              {"function": "query", "abs_path": "/app/node_modules/pg/lib/client.js"},
              {"function": "afterConnect", "filename": "node:net"}]
    assert top_frame(frames) == frames[0]


def test_only_library_frames_give_the_innermost_and_none_gives_none() -> None:
    frames = [{"function": "a", "abs_path": "/x/node_modules/a.js"},
              {"function": "b", "abs_path": "/x/node_modules/b.js"}]
    assert top_frame(frames) == frames[1]
    assert top_frame([]) is None
    assert top_frame([{"function": "a", "in_app": False}]) == {"function": "a",
                                                               "in_app": False}
