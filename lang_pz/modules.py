"""The research's abstractions: a LangMARL iteration written as a deep-RL pipeline.

LangMARL presents its optimiser as "TensorDict -> State, ProbabilisticActor -> LLMActor,
ValueOperator -> LLMCritic, Adam -> LanguagePolicyOptimizer: building an LLM multi-agent
optimizer looks like writing a standard deep-RL pipeline". These classes are that pipeline, a
thin public layer over the same code :func:`lang_pz.training.train` runs (each calls one phase
of :meth:`lang_pz.methods.Method.iteration`), so a loop written with them makes the decisions
``train()`` makes (``examples/research_loop.py``, checked by a test)::

    params = TextParameters(LangMARL.build(config))       # the named text policies (+ momentum)
    actor, critic = LLMActor(params), LLMCritic(params)
    optimizer = LanguagePolicyOptimizer(params)
    for it in range(config.iterations):
        state = actor(run.begin(it))    # rollouts, the current validation, the held-out test
        loss = critic(state)            # counterfactual evidence, per-agent credits in words
        optimizer.zero_grad()
        loss.backward()                 # per-agent language gradients (TextGrad's backward)
        optimizer.step()                # candidate texts; validation is the trust region

==========================  ========================  ===========================================
deep RL (TorchRL / torch)   here                      over
==========================  ========================  ===========================================
``TensorDict``              :data:`State`             :class:`~lang_pz.methods.data.IterationData`
``nn.Parameter`` s          :class:`TextParameters`   the method's state (agent -> policy text)
``ProbabilisticActor``      :class:`LLMActor`         :meth:`Method.rollout` (team of LLMPolicy)
``ValueOperator``           :class:`LLMCritic`        :meth:`Method.criticise` (evidence, assess)
``loss.backward()``         :meth:`Loss.backward`     :meth:`Method.backward` (gradients)
``Adam.step()``             :meth:`LanguagePolicyOptimizer.step`  :meth:`Method.step` (propose,
                                                      accept: the trust region, commit)
==========================  ========================  ===========================================

Unlike a gradient step, :meth:`LanguagePolicyOptimizer.step` keeps a candidate only if the
held-out objective does not fall by more than ``tolerance`` (:func:`lang_pz.training.accept`):
what a step keeps is decided by a measure it did not see, as a trust region bounds a PPO step.
Any registered method works the same way (MASkills: the parameter is a skill library).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lang_pz.methods.base import Method
from lang_pz.methods.data import IterationData
from lang_pz.runs import IterationLog
from lang_pz.training.players import Team
from lang_pz.training.state import Callback, IterationMetrics, TrainState

#: One iteration's container (TorchRL's ``TensorDict``): what the modules read and write.
State = IterationData

__all__ = ["LLMActor", "LLMCritic", "LanguagePolicyOptimizer", "Loss", "State", "TextParameters"]


class TextParameters:
    """The parameters the actor plays and the optimiser changes, shared by both (as torch's
    ``nn.Parameter`` objects are): a method's run state, and the gradient :meth:`Loss.backward`
    left for :meth:`LanguagePolicyOptimizer.step`.

    Args:
        method: the method (e.g. ``LangMARL.build(config)``).
        state: where to start (default: the method's start: the initial policies).

    Attributes:
        state: the current run state (LangMARL's: the policies and the momentum).
        grad: the iteration whose gradients were computed and not yet stepped (``None`` after
            :meth:`LanguagePolicyOptimizer.zero_grad`).
    """

    def __init__(self, method: Method[Any, Any], state: TrainState | None = None) -> None:
        self.method = method
        self.state = state if state is not None else method.start()
        self.grad: IterationData[Any, Any] | None = None

    def named_parameters(self) -> dict[str, Any]:
        """name -> value: agent -> policy text for text policies (else the method's one parameter)."""
        value = self.method.parameter(self.state)
        return dict(value) if isinstance(value, Mapping) else {self.method.name: value}

    def named_gradients(self) -> dict[str, Any]:
        """name -> its direction of change from the last :meth:`Loss.backward` (LangMARL: agent ->
        its aggregated :class:`~lang_pz.optimisers.Gradient`; empty before one)."""
        grads = self.grad.gradients if self.grad is not None else None
        by_agent = getattr(grads, "by_agent", None)
        if by_agent is not None:
            return {a: g.gradient for a, g in by_agent.items()}
        return {} if grads is None else {self.method.name: grads}


class LLMActor:
    """Text parameters -> decisions: the team of :class:`~lang_pz.policies.llm.LLMPolicy` agents
    playing the current texts (TorchRL's ``ProbabilisticActor``; the collector is its call)."""

    def __init__(self, params: TextParameters) -> None:
        self.params = params

    def team(self) -> Team:
        """``env -> team`` playing the current parameters."""
        return self.params.method.team(self.params.state)

    def __call__(self, log: IterationLog, callbacks: Sequence[Callback] = ()) -> State[Any, Any]:
        """An iteration's batch (held-out test, current validation, training episodes), written
        to ``log`` (:meth:`~lang_pz.methods.Method.rollout`).

        Raises:
            StageError: the play stage failed.
        """
        return self.params.method.rollout(self.params.state, log, callbacks)


class Loss:
    """What :class:`LLMCritic` returns: the credited batch, ready for :meth:`backward`."""

    def __init__(self, params: TextParameters, state: State[Any, Any]) -> None:
        self.params, self.state = params, state

    def backward(self) -> None:
        """Fill the parameters' gradients from the critic's reports
        (:meth:`~lang_pz.methods.Method.backward`: LangMARL's evidence gate, then per agent a
        gradient per episode aggregated with its momentum).

        Raises:
            StageError: an optimiser call failed (``on_stage_failure: stop``).
        """
        self.params.method.backward(self.state)
        self.params.grad = self.state


class LLMCritic:
    """Trajectories -> per-agent credits in words, on the evidence of re-runs of the same seeds
    (TorchRL's ``ValueOperator``; the critic of the config's ``critic_mode``)."""

    def __init__(self, params: TextParameters) -> None:
        self.params = params

    def __call__(self, state: State[Any, Any]) -> Loss:
        """``state`` with its evidence and one report per episode
        (:meth:`~lang_pz.methods.Method.criticise`; ``state.reports``).

        Raises:
            StageError: the critic failed (``on_stage_failure: stop``).
        """
        self.params.method.criticise(state)
        return Loss(self.params, state)


class LanguagePolicyOptimizer:
    """``zero_grad()`` / ``step()`` over the text parameters (``torch.optim.Adam``'s use, TextGrad's
    ``TextualGradientDescent``): a step proposes a new text along each gradient and keeps those
    validation accepts (the trust region); the momentum is the method's (accepted directions only)."""

    def __init__(self, params: TextParameters) -> None:
        self.params = params

    def zero_grad(self) -> None:
        """Forget the gradients of the last :meth:`Loss.backward`."""
        self.params.grad = None

    def step(self) -> IterationMetrics:
        """Candidates along the gradients, validated on held-out seeds in order, the accepted
        ones written into the parameters (:meth:`~lang_pz.methods.Method.step`; the iteration's
        ``done.json`` is written last).

        Returns:
            The iteration's metrics (``accepted_agents``: what the trust region kept).

        Raises:
            ValueError: no :meth:`Loss.backward` since the last :meth:`zero_grad`.
            StageError: a stage failed.
        """
        if self.params.grad is None:
            raise ValueError("step() needs gradients: call loss.backward() first")
        metrics, self.params.state = self.params.method.step(self.params.grad)
        self.params.grad = None
        return metrics
