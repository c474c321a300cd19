"""Asking before anything leaves the machine.

Without ``--llm`` nothing is sent anywhere. With a remote endpoint (Claude; an OpenAI-
compatible or Ollama server whose host is not this machine), the first pass in a
workspace says what it will send — how many sections, about how many tokens, to which
host — and goes on only when the user agrees (or passed ``--yes``); the agreement is kept
in ``graph.db`` (meta ``llm_consent``, per provider and host), so later passes only say
what they send. A local endpoint needs no agreement; the estimate is shown all the same.
"""

from __future__ import annotations

from dataclasses import dataclass

from ... import storage
from ...errors import ConsentRefused

__all__ = ["SendSummary", "ConsentRefused", "consent_given", "record_consent", "consent_key", "CONSENT_KEY"]

CONSENT_KEY = "llm_consent"


@dataclass(frozen=True)
class SendSummary:
    """What a pass is about to send, for the announcement and the question."""

    provider: str
    model: str
    host: str
    endpoint: str
    remote: bool
    sections: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    needs_consent: bool = False

    def describe(self) -> str:
        cost = "" if self.cost_usd is None else (
            ", free (local)" if not self.remote else f", about ${self.cost_usd:.4f} at list price")
        where = f"{self.host} ({'leaves this machine' if self.remote else 'this machine'})"
        return (f"LLM binding will send {self.sections:,} doc section(s) with their candidate names "
                f"(~{self.input_tokens:,} input + ~{self.output_tokens:,} output tokens{cost}) "
                f"to {self.provider} model {self.model} at {where}.")


def consent_key(provider) -> str:
    return f"{provider.name}@{provider.host}"


def consent_given(store, provider) -> bool:
    return consent_key(provider) in (store.get_meta(CONSENT_KEY) or {})


def record_consent(store, provider) -> None:
    with store.transaction():
        agreed = store.get_meta(CONSENT_KEY) or {}
        agreed[consent_key(provider)] = storage.utc_now()
        store.set_meta(CONSENT_KEY, agreed)
