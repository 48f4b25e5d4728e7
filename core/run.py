"""The old name of :class:`core.agent_session.AgentSession`, kept so callers keep working.

New code imports from :mod:`core.agent_session`; ``Runner`` is the same class.
"""

from core.agent_session import AgentSession, RunOptions, check_probe, make_provider
from core.scenarios.prepare import prepare_workspace

Runner = AgentSession

__all__ = ["AgentSession", "RunOptions", "Runner", "check_probe", "make_provider",
           "prepare_workspace"]
