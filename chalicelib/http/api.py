"""What route modules import: `endpoint` and `Call` (each job lives in its own module, named below)."""
from .bodies import BODY_METHODS, MAX_BODY_BYTES  # noqa: F401
from .call import Call  # noqa: F401
from .endpoint import endpoint  # noqa: F401
from .params import DEFAULT_LIMIT, MAX_LIMIT, whole_number  # noqa: F401
from .registry import OPERATIONS, Operation  # noqa: F401
