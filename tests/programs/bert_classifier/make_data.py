"""Writes the bundled tiny task and tiny "pretrained" BERT for bert_classifier.py.

Not part of the published program. Run from this folder:

    python make_data.py                    # data/*.tsv, tiny_bert/{vocab.txt,bert_config.json}
    <2.15 python> make_data.py --checkpoint  # also tiny_bert/bert_model.ckpt.*

Task: CoLA's file layout (run_classifier.py's ColaProcessor: train/dev rows
`id<TAB>label<TAB>*<TAB>sentence`, test rows `index<TAB>sentence` after a
header), short lower-case sentences over a 61-word vocabulary. Each sentence
holds one or two mood words of one polarity among neutral words: label 1 for
the 20 good words, 0 for the 20 bad ones. test_labels.txt (one label a line)
is read by bert_classifier.py only, for the predictions' accuracy.

Checkpoint: the published modeling.BertModel built in a TF1 graph under graph
seed 0 and saved with tf.compat.v1.train.Saver (no meta graph), as Google's
bert_model.ckpt files were: the fine-tuning run's init_checkpoint. Made once,
with TensorFlow 2.15.1.
"""

from __future__ import annotations

import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
GOOD = (
    "good great happy bright sunny warm kind sweet calm lovely "
    "fresh clean gentle brave smart glad nice fine rich proud"
).split()
BAD = (
    "bad awful sad dark rainy cold cruel bitter angry ugly "
    "stale dirty harsh weak dull gloomy nasty poor grim sour"
).split()
NEUTRAL = (
    "the a cat dog house tree car road city river "
    "man woman child day night table book window garden street"
).split()
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
VOCAB = SPECIAL + NEUTRAL + GOOD + BAD + ["."]

BERT_CONFIG = {
    "attention_probs_dropout_prob": 0.1,
    "hidden_act": "gelu",
    "hidden_dropout_prob": 0.1,
    "hidden_size": 32,
    "initializer_range": 0.02,
    "intermediate_size": 64,
    "max_position_embeddings": 64,
    "num_attention_heads": 2,
    "num_hidden_layers": 2,
    "type_vocab_size": 2,
    "vocab_size": len(VOCAB),
}


def sentence(rng: random.Random) -> tuple[str, int]:
    label = rng.randint(0, 1)
    mood = GOOD if label else BAD
    words = [rng.choice(NEUTRAL) for _ in range(rng.randint(3, 8))]
    for _ in range(rng.randint(1, 2)):
        words.insert(rng.randint(0, len(words)), rng.choice(mood))
    return " ".join(words) + " .", label


def write_data() -> None:
    rng = random.Random(20240601)
    data = os.path.join(HERE, "data")
    os.makedirs(data, exist_ok=True)
    for split, count in (("train", 320), ("dev", 96)):
        with open(os.path.join(data, f"{split}.tsv"), "w") as f:
            for i in range(count):
                text, label = sentence(rng)
                f.write(f"{split}{i}\t{label}\t*\t{text}\n")
    labels = []
    with open(os.path.join(data, "test.tsv"), "w") as f:
        f.write("index\tsentence\n")
        for i in range(64):
            text, label = sentence(rng)
            labels.append(label)
            f.write(f"{i}\t{text}\n")
    with open(os.path.join(data, "test_labels.txt"), "w") as f:
        f.write("".join(f"{label}\n" for label in labels))
    model = os.path.join(HERE, "tiny_bert")
    os.makedirs(model, exist_ok=True)
    with open(os.path.join(model, "vocab.txt"), "w") as f:
        f.write("".join(f"{token}\n" for token in VOCAB))
    with open(os.path.join(model, "bert_config.json"), "w") as f:
        json.dump(BERT_CONFIG, f, indent=2, sort_keys=True)
        f.write("\n")


def write_checkpoint() -> None:
    sys.path.insert(0, HERE)
    import modeling
    import tensorflow.compat.v1 as tf

    config = modeling.BertConfig.from_dict(BERT_CONFIG)
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        input_ids = tf.placeholder(tf.int32, [None, 32], name="input_ids")
        modeling.BertModel(config=config, is_training=False, input_ids=input_ids)
        saver = tf.train.Saver(tf.global_variables())
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            saver.save(
                session,
                os.path.join(HERE, "tiny_bert", "bert_model.ckpt"),
                write_meta_graph=False,
                write_state=False,
            )


if __name__ == "__main__":
    write_data()
    if "--checkpoint" in sys.argv[1:]:
        write_checkpoint()
