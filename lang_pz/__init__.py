"""lang_pz: language multi-agent reinforcement learning."""
