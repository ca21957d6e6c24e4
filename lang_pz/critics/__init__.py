"""Language critics: read trajectories, assign credit in words."""

from lang_pz.critics.central import CentralCritic, Credit, CriticReport

__all__ = ["CentralCritic", "Credit", "CriticReport"]
