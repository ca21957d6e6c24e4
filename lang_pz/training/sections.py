"""The built-in methods' sections of a training configuration: ``langmarl:``
(:class:`LangMARLConfig`) and ``maskills:`` (:class:`MASkillsConfig`), each the settings model of
one registered method (:mod:`lang_pz.training.registry`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_core import PydanticCustomError

from lang_pz.critics.modes import critic_mode, critic_modes, described

__all__ = ["LangMARLConfig", "MASkillsConfig", "one_of"]


def one_of(names: list[str]) -> PydanticCustomError:
    """The error of a value that is none of ``names`` (worded as pydantic words a ``Literal``'s)."""
    quoted = [repr(n) for n in names]
    expected = " or ".join([", ".join(quoted[:-1]), quoted[-1]] if len(quoted) > 1 else quoted)
    return PydanticCustomError("literal_error", "Input should be {expected}", {"expected": expected})


class LangMARLConfig(BaseModel):
    """The settings of ``method: langmarl`` (the ``langmarl:`` section of a config): the critic,
    its counterfactual evidence and the textual optimiser's update."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    critic_mode: str = Field(
        "central_credit",
        description=f"a registered critic mode: {described()}",
    )
    critic_options: dict[str, Any] = Field(
        default_factory=dict,
        description="options of a registered critic mode that has its own settings (checked by its settings model)",
    )
    counterfactual: list[str] = Field(
        default_factory=list, description="re-run replacements shown to the critic, e.g. [alternatives] or [random, default]"
    )
    counterfactual_steps: list[int] | None = Field(
        None,
        min_length=1,
        description="replace only these decisions (0-based) in counterfactual re-runs (default: every decision)",
    )
    evidence_gate: bool = Field(
        True, description="with counterfactual: update only agents for which some re-run beat what they played"
    )
    critic_credit_levels: list[float] | None = Field(
        [-1.0, -0.5, 0.0, 0.5, 1.0], min_length=1, description="credit values offered to the critic (null: any in [-1, 1])"
    )
    directions: Literal["evidence", "free"] = Field(
        "evidence",
        description="evidence: a gradient's change is chosen among the actions re-runs found better "
        "(the LLM picks and phrases); free: any text (as published)",
    )
    max_rewrite: float = Field(0.75, gt=0, le=1, description="largest share of a policy one update may rewrite")
    decisive_window: int = Field(4, ge=1, description="decisive/coalition: decisions per coarse window of the search")
    decisive_share: float = Field(
        0.5, gt=0, le=1, description="decisive/coalition: share of the gap to the best re-run a change must recover"
    )
    decisive_max_reruns: int = Field(200, ge=1, description="decisive/coalition: most re-runs of the search per episode")
    coalition_permutations: int = Field(20, ge=1, description="coalition: sampled permutations of the Shapley estimate")
    coalition_max_reruns: int = Field(32, ge=0, description="coalition: most coalition re-runs per episode")

    @field_validator("counterfactual_steps")
    @classmethod
    def _decision_indices(cls, steps: list[int] | None) -> list[int] | None:
        negative = [s for s in steps or [] if s < 0]
        if negative:
            raise ValueError(
                f"counterfactual_steps {negative} are negative; they are 0-based decision indices "
                "(0 = each agent's first decision)"
            )
        return steps

    @field_validator("critic_mode")
    @classmethod
    def _registered_mode(cls, mode: str) -> str:
        if mode not in critic_modes():
            raise one_of(critic_modes())
        return mode

    @model_validator(mode="after")
    def _options_of_the_mode(self) -> LangMARLConfig:
        model = critic_mode(self.critic_mode).settings
        if model is None and self.critic_options:
            raise ValueError(f"critic_mode {self.critic_mode!r} takes no critic_options; drop {sorted(self.critic_options)}")
        if model is not None:
            try:
                model.model_validate(self.critic_options)
            except ValidationError as exc:
                problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
                raise ValueError(f"critic_options of critic_mode {self.critic_mode!r}: {problems}") from None
        return self

    @model_validator(mode="after")
    def _counterfactual_critic_has_evidence(self) -> LangMARLConfig:
        evidence = critic_mode(self.critic_mode).evidence
        if evidence == "reruns" and not self.counterfactual:
            raise ValueError(
                f"critic_mode {self.critic_mode!r} computes each agent's credit from re-runs: give the "
                "replacements to re-run with, e.g. counterfactual: [alternatives] (or [default])"
            )
        if evidence == "search":
            if not self.counterfactual:
                raise ValueError(
                    f"critic_mode {self.critic_mode!r} searches re-runs that replace decisions by other choices: "
                    "give them, e.g. counterfactual: [alternatives] (free-text roles then try [default])"
                )
            whole = [r for r in self.counterfactual if r in ("previous", "reference")]
            if whole:
                raise ValueError(
                    f"critic_mode {self.critic_mode!r} replaces single decisions; counterfactual {whole} replaces "
                    "whole policies: use alternatives, default, random or action words"
                )
            if self.counterfactual_steps is not None:
                raise ValueError(
                    f"critic_mode {self.critic_mode!r} chooses the decisions it replaces itself; drop "
                    f"counterfactual_steps {self.counterfactual_steps} (decisive_window sets the coarse windows)"
                )
        return self


class MASkillsConfig(BaseModel):
    """The settings of ``method: maskills`` (the ``maskills:`` section of a config): the starting
    library, its scopes, how skills are credited and edited, and the library's bounds."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    skills: str | None = Field(
        None, description="the starting skill library folder (Agent Skills; default: an empty library)"
    )
    skill_scoping: Literal["team", "role", "agent"] = Field(
        "team", description="where induced skills go: shared by the team, the agent's role, or the agent"
    )
    skill_roles: dict[str, str] = Field(
        default_factory=dict, description="agent -> role (which role scope it sees; default: itself)"
    )
    skill_credit: Literal["invocation", "episode"] = Field(
        "invocation",
        description="credit per skill invocation (withheld-skill re-runs, per-use "
        "critic) or, as an ablation, every skill shown in an episode shares the episode's outcome",
    )
    skill_rollback: bool = Field(
        True,
        description="validate each library edit and roll a regression back (false: keep every "
        "edit unvalidated, an ablation)",
    )
    skill_reruns: int | None = Field(
        None,
        ge=0,
        description="withheld-skill re-runs per episode, most-invoked skills first "
        "(default: one per invoked skill and agent)",
    )
    max_skill_edits: int = Field(2, ge=1, description="most library edits proposed per iteration")
    max_skills: int = Field(24, ge=1, description="most skills in the library")
    max_skills_per_scope: int = Field(8, ge=1, description="most skills in one scope")
    max_skill_description_chars: int = Field(200, ge=20, le=1024, description="longest skill description an edit may write")
    max_skill_body_chars: int = Field(600, ge=20, description="longest skill body an edit may write")

    @field_validator("skills")
    @classmethod
    def _library_folder(cls, skills: str | None) -> str | None:
        if skills is not None and not skills.strip():
            raise ValueError("skills must be a library folder, got an empty string; drop it to start from no skills")
        return skills


#: Why a setting of one method does not fit the other (added to the error that names its section).
_HINTS = {
    "counterfactual": "counterfactual re-runs replace an agent's actions (method langmarl); maskills measures "
    "skills by withheld-skill re-runs instead (skill_reruns)",
    "skills": "the starting library of method 'maskills'",
}
