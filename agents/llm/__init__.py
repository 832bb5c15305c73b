"""A seat played by a language model behind any chat-completions server (``llm:model=NAME,base_url=URL,...``).

The agent is ``agents.llm.agent.LLMAgent``; the seat's view in words and the reply parser are
``bourre_env.text``'s; the prompt templates are the versioned files of ``agents/llm/prompts/``. ``openai`` (the
``llm`` extra) is imported only when an agent is built, so that ``agents`` imports without it.
"""

from __future__ import annotations

from agents.llm.agent import (
    PROMPT_VERSION,
    LLMAgent,
    LLMOptions,
    LLMStats,
    Prompt,
    load_prompt,
    make_llm,
    parse_spec,
)

__all__ = ["LLMAgent", "LLMOptions", "LLMStats", "Prompt", "load_prompt", "parse_spec", "make_llm", "PROMPT_VERSION"]
