"""``langmarl.actor_check``: LangMARL's propose stage plays each candidate of an evidence-supported
direction with the run's actor on the batch's decisions the direction cites (the gradients stage
finds them, :class:`~lang_pz.methods.langmarl.steps.AgentGradient` carries them), and refuses a
text the actor does not follow. Scripted stand-in on 5-piston Pistonball (tests/standins.py)."""

from __future__ import annotations

from pathlib import Path

from standins import AGENTS, DOWN, StandIn, config, jsonl, prompt_of, role_of, train_with

from lang_pz.backends.base import GenerationRequest
from lang_pz.runs import read_policies


class DeafActor(StandIn):
    """The stand-in, but its actor plays "up" whatever the policy says (as the embedded actor once
    played "Always play up." as down)."""

    def reply(self, req: GenerationRequest) -> str:
        return "up" if role_of(req) == "actor" else super().reply(req)


def checked_run(tmp_path: Path, stand_in: StandIn, **kw: object) -> tuple[list[dict], dict[str, str]]:
    """One iteration from all up with down re-runs, every agent flipped to down by the optimiser;
    its ``gradients.jsonl`` lines and its candidates."""
    cfg = config(tmp_path / "run", counterfactual=["down"], evidence_gate=False, **kw)
    train_with(stand_in, cfg)
    d = tmp_path / "run" / "iter_000"
    cands = read_policies(d / "candidates") if (d / "candidates").exists() else {}
    return jsonl(d / "gradients.jsonl"), cands


def supported(grads: list[dict]) -> list[dict]:
    """The updates along a direction the re-runs support (the ones the check plays)."""
    out = [g for g in grads if g["gradient"]["supported"]]
    assert out, "no supported direction: the check has nothing to play (the setup changed)"
    return out


def test_a_followed_candidate_carries_its_measured_adherence(tmp_path):
    grads, cands = checked_run(tmp_path, StandIn(flipping=AGENTS), actor_check=True)
    for g in supported(grads):
        assert g["new"] == DOWN and cands[g["agent"]] == DOWN
        a = g["adherence"]
        assert a["word"] == "down" and a["rate"] == 1.0 and a["decisions"] >= 1 and a["played"] == {"down": a["decisions"]}
        assert g["rejected"] == []


def test_a_candidate_the_actor_does_not_follow_is_refused(tmp_path):
    stand_in = DeafActor(flipping=AGENTS)
    grads, cands = checked_run(tmp_path, stand_in, actor_check=True)
    for g in supported(grads):
        assert g["new"] == g["old"] and g["agent"] not in cands  # refused: the agent keeps its policy
        assert g["rejected"] and all(r["rate"] == 0.0 and r["played"].get("up") == r["decisions"] for r in g["rejected"])
    apply = [r for r in stand_in.backend.requests if role_of(r) == "apply"]
    assert any("it must play 'down'" in prompt_of(r) for r in apply)  # retried, shown why


def test_without_actor_check_nothing_is_played(tmp_path):
    grads, cands = checked_run(tmp_path, DeafActor(flipping=AGENTS))
    for g in supported(grads):
        assert g["adherence"] is None and g["rejected"] == [] and cands[g["agent"]] == DOWN
