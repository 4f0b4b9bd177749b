"""Modules imported on first use, so that importing the app (a Lambda cold start) stays cheap.

Route modules name their use cases through `lazy(...)`: a request pays for the pydantic models and services of
its own route only, and GET /products/:id never imports pydantic at all.
"""
import importlib


class LazyModule:
    def __init__(self, name: str):
        self._module_name = name

    def __getattr__(self, attribute: str):
        # import_module takes the import lock, so concurrent first requests are safe.
        return getattr(importlib.import_module(self._module_name), attribute)

    def __repr__(self) -> str:
        return f"<lazy module {self._module_name}>"


def lazy(name: str) -> LazyModule:
    return LazyModule(name)
