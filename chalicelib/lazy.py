"""The one lazy-import mechanism: a dotted name, imported on first use.

Why it pays: importing the app is a Lambda cold start, and Chalice needs every route module imported to route.
Most use cases (service/*.py) import the domain's pydantic models, which cost about as much as boto3 does.
So route modules (http/*.py) and the job triggers (jobs/handlers.py) never import a use case or a model at the
top; they name it, and `load` imports it when a request first uses it:

- a module: `catalogue = lazy("chalicelib.service.catalogue")`, then `catalogue.get_product(...)`;
- a model: `endpoint(..., body="domain.product:Product")`, loaded by http/registry.py `model` through `load`.

The same holds for the few other costly imports only some requests need (the OpenAPI models in http/docs.py,
Powertools in http/logs.py) and for the domain modules of service/catalogue.py, which is on the cold path itself.

What it is for is asserted by tests/api/test_cold_path.py (a cold GET /products/:id imports no pydantic) and
measured by bench/coldstart.py (cold start ÷ a floor that only imports boto3 and chalice). Everything else is
imported normally at the top of its module; an import inside a function is there only to break a real import
cycle and says so.
"""
import importlib
from types import ModuleType
from typing import Any


def load(name: str) -> Any:
    """"package.module" gives the module, "package.module:Name" one of its attributes (import_module takes the
    import lock, so concurrent first requests are safe)."""
    module, _, attribute = name.partition(":")
    loaded = importlib.import_module(module)
    return getattr(loaded, attribute) if attribute else loaded


class LazyModule:
    """A module that is imported when one of its attributes is first read."""

    def __init__(self, name: str):
        self._module_name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attribute: str) -> Any:
        # The module is kept once imported (a warm request skips the import machinery); its attributes are not,
        # so a test that patches one is seen.
        module = self._module
        if module is None:
            module = self._module = load(self._module_name)
        return getattr(module, attribute)

    def __repr__(self) -> str:
        return f"<lazy module {self._module_name}>"


def lazy(name: str) -> LazyModule:
    return LazyModule(name)
