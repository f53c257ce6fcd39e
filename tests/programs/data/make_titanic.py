"""Writes titanic_train.csv (627 rows) and titanic_eval.csv (264 rows), seeded.

Stand-ins for https://storage.googleapis.com/tf-datasets/titanic/train.csv and
eval.csv, which TensorFlow's estimator tutorials (linear.ipynb,
boosted_trees.ipynb, boosted_trees_model_understanding.ipynb) download. Same
header, column order and value vocabularies as those files:

    survived,sex,age,n_siblings_spouses,parch,fare,class,deck,embark_town,alone

survived 0/1; sex male/female; age a float (a missing age is 28.0, as in the
published files); n_siblings_spouses 0-5 or 8 and parch 0-6, integers; fare a
float rounded to 4 places; class First/Second/Third; deck unknown or A-G
(mostly unknown, decks mostly First class); embark_town Southampton,
Cherbourg, Queenstown, rarely unknown; alone y when the passenger has no
sibling, spouse, parent or child aboard, else n. The frequencies follow the
published data (38% survive; 65% male; 55% third class) and survival depends
on sex, class, age, family size and fare, so the models learn something
(women, children and first class survive more often).

    python tests/programs/data/make_titanic.py
"""

import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
HEADER = "survived,sex,age,n_siblings_spouses,parch,fare,class,deck,embark_town,alone"
N_TRAIN, N_EVAL = 627, 264
DECKS = ["A", "B", "C", "D", "E", "F", "G"]


def passenger(rng):
    cls = rng.choice(["First", "Second", "Third"], p=[0.24, 0.21, 0.55])
    sex = rng.choice(["male", "female"], p=[0.65, 0.35])
    if rng.random() < 0.2:
        age = 28.0  # missing age, filled as in the published files
    else:
        mean = {"First": 38.0, "Second": 30.0, "Third": 25.0}[cls]
        age = float(np.clip(rng.normal(mean, 13.0), 0.42, 80.0))
        age = round(round(age * 12) / 12, 2) if age < 1 else float(round(age))
    sibsp = int(rng.choice([0, 1, 2, 3, 4, 5, 8], p=[0.68, 0.235, 0.03, 0.02, 0.02, 0.01, 0.005]))
    parch = int(rng.choice([0, 1, 2, 3, 4, 5, 6], p=[0.76, 0.13, 0.09, 0.006, 0.005, 0.006, 0.003]))
    if age < 14 and parch == 0:
        parch = int(rng.choice([1, 2]))
    base = {"First": 84.0, "Second": 20.5, "Third": 13.5}[cls]
    fare = round(float(base * rng.lognormal(0.0, 0.45) * (1 + 0.15 * (sibsp + parch))), 4)
    if cls == "First":
        deck = rng.choice(["unknown"] + DECKS, p=[0.2, 0.1, 0.25, 0.25, 0.15, 0.05, 0.0, 0.0])
    else:
        deck = rng.choice(["unknown", "D", "E", "F", "G"], p=[0.9, 0.02, 0.03, 0.03, 0.02])
    embark = rng.choice(
        ["Southampton", "Cherbourg", "Queenstown", "unknown"], p=[0.72, 0.19, 0.085, 0.005]
    )
    alone = "y" if sibsp + parch == 0 else "n"
    logit = (
        -1.75
        + 2.5 * (sex == "female")
        + {"First": 1.0, "Second": 0.3, "Third": -0.8}[cls]
        - 0.03 * (age - 30.0)
        + 1.2 * (age < 10)
        - 0.5 * (sibsp >= 3)
        + 0.4 * (embark == "Cherbourg")
        + 0.003 * fare
    )
    survived = int(rng.random() < 1.0 / (1.0 + np.exp(-logit)))
    return (survived, sex, age, sibsp, parch, fare, cls, deck, embark, alone)


def write(path, rows):
    with open(path, "w") as f:
        f.write(HEADER + "\n")
        for row in rows:
            f.write(",".join(str(v) for v in row) + "\n")


def main():
    rng = np.random.default_rng(1912)
    rows = [passenger(rng) for _ in range(N_TRAIN + N_EVAL)]
    write(os.path.join(HERE, "titanic_train.csv"), rows[:N_TRAIN])
    write(os.path.join(HERE, "titanic_eval.csv"), rows[N_TRAIN:])


if __name__ == "__main__":
    main()
