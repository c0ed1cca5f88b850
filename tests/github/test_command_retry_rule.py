"""A command that fails is promised a retry only where the dispatcher retries its delivery
(:func:`bot.github.common.is_permanent`): an error reading a payload is dead-lettered at once, so
telling the commenter "I will try it again by myself" would be false."""
from __future__ import annotations

from http import HTTPStatus

import gidgethub

from bot.commands.runner import lookup_retried
from bot.github.common import PayloadError


def test_a_command_is_promised_a_retry_only_where_the_dispatcher_retries():
    assert lookup_retried(gidgethub.BadRequest(HTTPStatus.BAD_GATEWAY)) is True
    assert lookup_retried(gidgethub.BadRequest(HTTPStatus.FORBIDDEN)) is True
    assert lookup_retried(gidgethub.BadRequest(HTTPStatus.TOO_MANY_REQUESTS)) is True
    assert lookup_retried(OSError("connection reset")) is True
    assert lookup_retried(gidgethub.BadRequest(HTTPStatus.UNPROCESSABLE_ENTITY)) is False
    for e in (KeyError("head"), TypeError("'NoneType' object is not subscriptable"), AttributeError("x"),
              PayloadError("malformed issue_comment payload: comment.id: field required")):
        assert lookup_retried(e) is False, e
