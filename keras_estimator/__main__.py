"""`python -m keras_estimator`: the `keras-estimator` command."""

import sys

from keras_estimator._src.cli.main import main

sys.exit(main())
