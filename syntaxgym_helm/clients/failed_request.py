"""The failed ``RequestResult`` the plugin's clients return for a request they cannot serve."""

from __future__ import annotations

from helm.common.request import ErrorFlags, RequestResult


def failed_request(message: str, *, fatal: bool = False) -> RequestResult:
    """A failed request that HELM's executor does not retry. Non-fatal (the default): HELM keeps
    it and the run goes on (the metric reports the item unscorable); fatal: the run stops."""
    return RequestResult(success=False, cached=False, error=message, completions=[],
                         embedding=[], error_flags=ErrorFlags(is_retriable=False, is_fatal=fatal))
