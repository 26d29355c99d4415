"""What drafting and answers share with the service: its state and live accessors."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pygls.workspace import TextDocument

from lsp_server.config import Settings
from lsp_server.documents import Documents
from lsp_server.notify import Notifier
from lsp_server.worker import Worker


@dataclass(frozen=True)
class ServerContext:
    """Accessors are callables so that their users always read the current value."""

    documents: Documents
    notify: Notifier
    settings: Callable[[], Settings]
    worker: Callable[[], Worker]
    document: Callable[[str], TextDocument | None]  # None for a URI that is not open
    active: Callable[[], bool]  # False while prewrite is off or has no model


class UsesContext:
    """Base of the parts that work on the service's behalf: the context as attributes."""

    def __init__(self, context: ServerContext):
        self.documents = context.documents
        self.notify = context.notify
        self.settings = context.settings
        self.worker = context.worker
        self.document = context.document
        self.active = context.active
