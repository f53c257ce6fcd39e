"""A census-style wide & deep program, as the cloud ML census estimator samples were written.

CSV text read with `TextLineDataset` + `decode_csv`, unused columns dropped
and the label popped from the dict `get_next()` returned, hash-bucket,
vocabulary, bucketized, crossed and embedding columns into a
`DNNLinearCombinedClassifier`, `train_and_evaluate` with a `FinalExporter`
whose serving input takes one raw placeholder per column (JSON requests), and
the export served by TensorFlow itself.

The data: census-like rows made from a seeded generator and written to a CSV
file (the program's only change: local data, few steps).
"""

import json
import os
import tempfile

import numpy as np
import tensorflow as tf

CSV_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education_num", "marital_status",
    "occupation", "relationship", "race", "gender", "capital_gain", "capital_loss",
    "hours_per_week", "native_country", "income_bracket",
]
CSV_COLUMN_DEFAULTS = [
    [0], [""], [0], [""], [0], [""], [""], [""], [""], [""], [0], [0], [0], [""], [""],
]
LABEL_COLUMN = "income_bracket"
LABELS = [" <=50K", " >50K"]
CATEGORIES = {
    "workclass": ["Private", "Self-emp", "Federal-gov", "Local-gov"],
    "education": ["Bachelors", "HS-grad", "Masters", "Doctorate", "Some-college"],
    "marital_status": ["Married", "Never-married", "Divorced"],
    "occupation": ["Tech-support", "Sales", "Exec-managerial", "Craft-repair"],
    "relationship": ["Husband", "Wife", "Own-child", "Not-in-family"],
    "race": ["White", "Black", "Asian-Pac-Islander", "Other"],
    "gender": ["Female", "Male"],
    "native_country": ["United-States", "Mexico", "India", "Germany"],
}


def write_rows(path, count, seed):
    rng = np.random.RandomState(seed)
    with open(path, "w") as handle:
        for _ in range(count):
            row = {key: rng.choice(values) for key, values in CATEGORIES.items()}
            row["age"] = int(rng.randint(17, 80))
            row["fnlwgt"] = int(rng.randint(10000, 500000))
            row["education_num"] = int(rng.randint(1, 17))
            row["capital_gain"] = int(rng.choice([0, 0, 0, 5000, 15000]))
            row["capital_loss"] = int(rng.choice([0, 0, 0, 1500]))
            row["hours_per_week"] = int(rng.randint(10, 70))
            score = (
                0.08 * (row["education_num"] - 9)
                + 0.03 * (row["age"] - 40)
                + 0.02 * (row["hours_per_week"] - 40)
                + (1.0 if row["capital_gain"] > 0 else 0.0)
                + (0.7 if row["occupation"] == "Exec-managerial" else 0.0)
                + (0.5 if row["marital_status"] == "Married" else -0.3)
            )
            row["income_bracket"] = LABELS[int(score + rng.normal(0, 0.3) > 0.3)].strip()
            handle.write(", ".join(str(row[c]) for c in CSV_COLUMNS) + "\n")


gender = tf.feature_column.categorical_column_with_vocabulary_list(
    "gender", [" Female", " Male"]
)
race = tf.feature_column.categorical_column_with_vocabulary_list(
    "race", [" White", " Black", " Asian-Pac-Islander", " Other"]
)
education = tf.feature_column.categorical_column_with_hash_bucket(
    "education", hash_bucket_size=1000
)
marital_status = tf.feature_column.categorical_column_with_hash_bucket(
    "marital_status", hash_bucket_size=100
)
relationship = tf.feature_column.categorical_column_with_hash_bucket(
    "relationship", hash_bucket_size=100
)
workclass = tf.feature_column.categorical_column_with_hash_bucket(
    "workclass", hash_bucket_size=100
)
occupation = tf.feature_column.categorical_column_with_hash_bucket(
    "occupation", hash_bucket_size=1000
)
native_country = tf.feature_column.categorical_column_with_hash_bucket(
    "native_country", hash_bucket_size=1000
)
age = tf.feature_column.numeric_column("age")
education_num = tf.feature_column.numeric_column("education_num")
capital_gain = tf.feature_column.numeric_column("capital_gain")
capital_loss = tf.feature_column.numeric_column("capital_loss")
hours_per_week = tf.feature_column.numeric_column("hours_per_week")

INPUT_COLUMNS = [
    gender, race, education, marital_status, relationship, workclass, occupation,
    native_country, age, education_num, capital_gain, capital_loss, hours_per_week,
]
UNUSED_COLUMNS = set(CSV_COLUMNS) - {c.name for c in INPUT_COLUMNS} - {LABEL_COLUMN}


def build_estimator(config, embedding_size=8, hidden_units=None):
    age_buckets = tf.feature_column.bucketized_column(
        age, boundaries=[18, 25, 30, 35, 40, 45, 50, 55, 60, 65]
    )
    wide_columns = [
        tf.feature_column.crossed_column(["education", "occupation"], hash_bucket_size=int(1e4)),
        tf.feature_column.crossed_column([age_buckets, "race", "occupation"], hash_bucket_size=int(1e6)),
        tf.feature_column.crossed_column(["native_country", "occupation"], hash_bucket_size=int(1e4)),
        gender, native_country, education, occupation, workclass, marital_status,
        relationship, age_buckets,
    ]
    deep_columns = [
        tf.feature_column.embedding_column(workclass, dimension=embedding_size),
        tf.feature_column.embedding_column(education, dimension=embedding_size),
        tf.feature_column.embedding_column(marital_status, dimension=embedding_size),
        tf.feature_column.embedding_column(gender, dimension=embedding_size),
        tf.feature_column.embedding_column(relationship, dimension=embedding_size),
        tf.feature_column.embedding_column(race, dimension=embedding_size),
        tf.feature_column.embedding_column(native_country, dimension=embedding_size),
        tf.feature_column.embedding_column(occupation, dimension=embedding_size),
        age, education_num, capital_gain, capital_loss, hours_per_week,
    ]
    return tf.estimator.DNNLinearCombinedClassifier(
        config=config,
        linear_feature_columns=wide_columns,
        dnn_feature_columns=deep_columns,
        dnn_hidden_units=hidden_units or [100, 70, 50, 25],
    )


def parse_label_column(label_string_tensor):
    table = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(
            tf.constant(LABELS), tf.constant([0, 1], tf.int64)
        ),
        default_value=-1,
    )
    return table.lookup(label_string_tensor)


def parse_csv(rows_string_tensor):
    row_columns = tf.expand_dims(rows_string_tensor, -1)
    columns = tf.io.decode_csv(row_columns, record_defaults=CSV_COLUMN_DEFAULTS)
    features = dict(zip(CSV_COLUMNS, columns))  # noqa: B905
    for col in UNUSED_COLUMNS:
        features.pop(col)
    return features


def input_fn(filenames, num_epochs=None, shuffle=True, batch_size=40):
    dataset = tf.data.TextLineDataset(filenames).map(parse_csv)
    if shuffle:
        dataset = dataset.shuffle(buffer_size=batch_size * 10, seed=3)
    dataset = dataset.repeat(num_epochs).batch(batch_size)
    iterator = tf.compat.v1.data.make_one_shot_iterator(dataset)
    features = iterator.get_next()
    return features, parse_label_column(features.pop(LABEL_COLUMN))


def json_serving_input_fn():
    inputs = {}
    for feat in INPUT_COLUMNS:
        categorical = hasattr(feat, "num_buckets")
        dtype = tf.string if categorical else tf.float32
        inputs[feat.name] = tf.compat.v1.placeholder(shape=[None], dtype=dtype)
    features = {key: tf.expand_dims(tensor, -1) for key, tensor in inputs.items()}
    return tf.estimator.export.ServingInputReceiver(features, inputs)


def main():
    work = tempfile.mkdtemp()
    train_file = os.path.join(work, "adult.data.csv")
    eval_file = os.path.join(work, "adult.test.csv")
    write_rows(train_file, 2000, seed=1)
    write_rows(eval_file, 400, seed=2)

    run_config = tf.estimator.RunConfig(
        model_dir=os.path.join(work, "model"),
        save_checkpoints_steps=200,
        tf_random_seed=5,
    )
    estimator = build_estimator(run_config)
    train_spec = tf.estimator.TrainSpec(
        lambda: input_fn([train_file], batch_size=40), max_steps=400
    )
    exporter = tf.estimator.FinalExporter("census", json_serving_input_fn)
    eval_spec = tf.estimator.EvalSpec(
        lambda: input_fn([eval_file], num_epochs=1, shuffle=False, batch_size=40),
        steps=10,
        exporters=[exporter],
        name="census-eval",
        throttle_secs=0,
    )
    metrics, exports = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)

    export_root = os.path.join(run_config.model_dir, "export", "census")
    export_dirs = sorted(os.listdir(export_root))
    served = tf.saved_model.load(os.path.join(export_root, export_dirs[-1]))
    signature = served.signatures["predict"]
    request = {
        "age": [25.0, 52.0], "workclass": [" Private", " Self-emp"],
        "education": [" HS-grad", " Doctorate"], "education_num": [9.0, 16.0],
        "marital_status": [" Never-married", " Married"],
        "occupation": [" Craft-repair", " Exec-managerial"],
        "relationship": [" Own-child", " Husband"], "race": [" White", " Asian-Pac-Islander"],
        "gender": [" Male", " Female"], "capital_gain": [0.0, 15000.0],
        "capital_loss": [0.0, 0.0], "hours_per_week": [40.0, 60.0],
        "native_country": [" United-States", " India"],
    }
    served_out = signature(
        **{
            key: tf.constant(value, tf.string if isinstance(value[0], str) else tf.float32)
            for key, value in request.items()
        }
    )

    def request_input_fn():
        return tf.data.Dataset.from_tensor_slices(
            {key: np.array(value)[:, None] for key, value in request.items()}
        ).batch(2)

    predicted = list(estimator.predict(request_input_fn))
    served_probs = served_out["probabilities"].numpy()
    result = {
        "global_step": int(metrics["global_step"]),
        "accuracy": round(float(metrics["accuracy"]), 4),
        "metric_keys": sorted(metrics),
        "exports": len(export_dirs),
        "signature_inputs": sorted(signature.structured_input_signature[1]),
        "served_classes": [int(i) for i in served_out["class_ids"].numpy().ravel()],
        "served_equals_predict": bool(
            np.allclose(served_probs, [p["probabilities"] for p in predicted], atol=1e-5)
        ),
        "has_eval_dir": os.path.isdir(os.path.join(run_config.model_dir, "eval_census-eval")),
        "returned_exports": len(exports),
    }
    print("RESULT " + json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
