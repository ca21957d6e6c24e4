"""LangMARL: text policies as the parameter (:class:`LangMARL`, ``method: langmarl``)."""

from lang_pz.methods.langmarl.method import LangMARL, make_critic

__all__ = ["LangMARL", "make_critic"]
