"""The three modes a model_fn is called in."""


class ModeKeys:
    """Standard names for model modes, as strings (the values tf.estimator used).

    * `TRAIN`: training.
    * `EVAL`: evaluation.
    * `PREDICT`: inference.
    """

    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "infer"


ALL_MODES = (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT)
