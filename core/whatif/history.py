"""The history a ctxlab engine keeps while a recording is walked, and its sizes.

It is built the way ``ctxlab replay`` builds ctxlab's side (:mod:`core.sources.replay.source`):
the same new input and the same replies as the recording, the agent's mid-history system
notes as user text, same-role neighbours merged so roles alternate, and the person's last
request (without the harness's reminders) as the request a summary keeps.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.measure import json_chars
from core.messages import blocks, is_block, message_text
from core.sources.replay.model import Message
from core.sources.replay.original import media_chars
from core.sources.replay.source import REMINDER, ctxlab_side
from core.sources.replay.steps import merge_into
from core.whatif.carry import carried


@dataclass
class EngineHistory:
    """ctxlab's side of the recording: what the engine is given before each request."""

    messages: list[Message] = field(default_factory=list)
    request: str = ""

    def take(self, messages: list[Message]) -> None:
        """The recorded input since the last request (a prompt, tool results, notes)."""
        for message in messages:
            if message.get("role") == "user" and \
                    not any(is_block(b, "tool_result") for b in blocks(message)):
                text = REMINDER.sub("", message_text(message))
                if text.strip():
                    self.request = text
            self.add(ctxlab_side(message))

    def add(self, message: Message) -> None:
        """Append, merging into a same-role last message (a new dict: never mutated)."""
        if self.messages and self.messages[-1].get("role") == message.get("role"):
            self.messages[-1] = merge_into(self.messages[-1], message.get("content"))
        else:
            self.messages.append(message)


class MessageSizes:
    """Each sent message's JSON chars, and the base64 image and document data among them,
    measured once: a message is never changed in place (engines and this walk build new
    dicts), so what the previous request held keeps its sizes
    (:func:`~core.whatif.carry.carried`). Only the last request is remembered."""

    def __init__(self) -> None:
        self._messages: list[Message] = []
        self._sizes: list[int] = []
        self._media: list[int] = []
        self.text: list[int] = []  # the last request's sizes without media (see text_sizes)

    def of(self, messages: list[Message]) -> list[int]:
        old, old_media = self._sizes, self._media
        sizes: list[int] = []
        media: list[int] = []
        c = 0
        for start, length in carried(self._messages, messages):
            if start >= 0:
                sizes.extend(old[start:start + length])
                media.extend(old_media[start:start + length])
            else:
                new = messages[c:c + length]
                sizes.extend(json_chars(m) for m in new)
                media.extend(media_chars(m.get("content")) for m in new)
            c += length
        self._messages, self._sizes, self._media = list(messages), sizes, media
        self.text = text_sizes(sizes, media)
        return sizes


def text_sizes(sizes: list[int], media: list[int]) -> list[int]:
    """Each message's chars without its base64 image and document data: what the session's
    ratio converts to tokens (the ratio was fitted without them, as an image costs tokens by
    its pixels, not its bytes). The same list when there is no media, the usual case."""
    if not any(media):
        return sizes
    return [size - data for size, data in zip(sizes, media, strict=True)]
