"""Rising instances: mean tables plus noise models, and their constructors."""

from risingbandits.instances.base import ConcavityReport, RisingInstance, validate_means
from risingbandits.instances.files import read_means_file
from risingbandits.instances.noise import Noise
from risingbandits.instances.synthetic import from_functions, from_means, intro, ltf, ltf_means

__all__ = [
    "ConcavityReport",
    "Noise",
    "RisingInstance",
    "from_functions",
    "from_means",
    "intro",
    "ltf",
    "ltf_means",
    "read_means_file",
    "validate_means",
]
