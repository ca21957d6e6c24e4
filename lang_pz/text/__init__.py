"""Text rendering of observations and parsing of text into actions."""

from lang_pz.text.codec import (
    action_vocabulary,
    describe_action_space,
    fallback_action,
    parse_action,
    render_value,
)

__all__ = [
    "action_vocabulary",
    "describe_action_space",
    "fallback_action",
    "parse_action",
    "render_value",
]
