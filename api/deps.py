"""Shared state for route functions: the knowledge base loaded once at start-up."""

from __future__ import annotations

from fastapi import Request

from errkb.kb import KnowledgeBase


def get_kb(request: Request) -> KnowledgeBase:
    return request.app.state.kb
