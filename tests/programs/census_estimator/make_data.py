"""Writes data/adult.data.csv and data/adult.test.csv: synthetic census rows.

The layout of the UCI adult files that census/estimator reads
(constants.CSV_COLUMNS, no header, ", "-separated so every string value has
its leading space, labels " <=50K" / " >50K"), with plausible values drawn
with a fixed seed. The label depends on education_num, marital_status,
hours_per_week, age, capital_gain and occupation through a noisy logistic
rule (about 30% " >50K"; the real data has 24%). Run once:

    python tests/programs/census_estimator/make_data.py
"""

import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 20240615
NUM_TRAIN = 2400
NUM_TEST = 800

EDUCATION = [  # (value, education_num, weight)
    ("Preschool", 1, 0.2),
    ("1st-4th", 2, 0.5),
    ("5th-6th", 3, 1.0),
    ("7th-8th", 4, 2.0),
    ("9th", 5, 1.6),
    ("10th", 6, 2.9),
    ("11th", 7, 3.6),
    ("12th", 8, 1.3),
    ("HS-grad", 9, 32.3),
    ("Some-college", 10, 22.4),
    ("Assoc-voc", 11, 4.2),
    ("Assoc-acdm", 12, 3.3),
    ("Bachelors", 13, 16.4),
    ("Masters", 14, 5.3),
    ("Prof-school", 15, 1.8),
    ("Doctorate", 16, 1.3),
]
WORKCLASS = [
    ("Private", 69.7),
    ("Self-emp-not-inc", 7.8),
    ("Local-gov", 6.4),
    ("?", 5.6),
    ("State-gov", 4.0),
    ("Self-emp-inc", 3.4),
    ("Federal-gov", 2.9),
    ("Without-pay", 0.1),
    ("Never-worked", 0.1),
]
OCCUPATION = [  # (value, weight, effect on the log-odds)
    ("Prof-specialty", 12.7, 0.8),
    ("Craft-repair", 12.6, 0.0),
    ("Exec-managerial", 12.5, 0.9),
    ("Adm-clerical", 11.6, -0.3),
    ("Sales", 11.2, 0.2),
    ("Other-service", 10.1, -1.2),
    ("Machine-op-inspct", 6.1, -0.4),
    ("?", 5.7, -0.8),
    ("Transport-moving", 4.9, -0.1),
    ("Handlers-cleaners", 4.2, -1.0),
    ("Farming-fishing", 3.0, -0.9),
    ("Tech-support", 2.9, 0.3),
    ("Protective-serv", 2.0, 0.3),
    ("Priv-house-serv", 0.5, -1.5),
]
RACE = [
    ("White", 85.4),
    ("Black", 9.6),
    ("Asian-Pac-Islander", 3.2),
    ("Amer-Indian-Eskimo", 1.0),
    ("Other", 0.8),
]
COUNTRY = [
    ("United-States", 89.6),
    ("Mexico", 2.0),
    ("?", 1.8),
    ("Philippines", 0.6),
    ("Germany", 0.4),
    ("Canada", 0.4),
    ("India", 0.3),
    ("England", 0.3),
    ("Cuba", 0.3),
    ("China", 0.2),
    ("Jamaica", 0.2),
    ("South", 0.2),
    ("Italy", 0.2),
    ("Puerto-Rico", 0.35),
    ("El-Salvador", 0.3),
    ("Vietnam", 0.2),
    ("Japan", 0.2),
    ("Poland", 0.2),
    ("Columbia", 0.2),
    ("Dominican-Republic", 0.2),
    ("Guatemala", 0.2),
    ("Taiwan", 0.15),
]


def pick(rng, pairs):
    weights = np.array([p[-1] if len(p) == 2 else p[1] for p in pairs], float)
    return pairs[rng.choice(len(pairs), p=weights / weights.sum())]


def row(rng):
    age = int(np.clip(rng.gamma(6.0, 6.5) + 12, 17, 90))
    education, education_num, _ = EDUCATION[
        rng.choice(
            len(EDUCATION),
            p=np.array([e[2] for e in EDUCATION]) / sum(e[2] for e in EDUCATION),
        )
    ]
    workclass = pick(rng, WORKCLASS)[0]
    occupation, _, occupation_effect = OCCUPATION[
        rng.choice(
            len(OCCUPATION),
            p=np.array([o[1] for o in OCCUPATION]) / sum(o[1] for o in OCCUPATION),
        )
    ]
    gender = "Male" if rng.random() < 0.67 else "Female"
    if age < 24:
        marital = "Never-married" if rng.random() < 0.9 else "Married-civ-spouse"
    else:
        marital = pick(
            rng,
            [
                ("Married-civ-spouse", 52.0),
                ("Never-married", 24.0),
                ("Divorced", 15.0),
                ("Separated", 3.5),
                ("Widowed", 3.5),
                ("Married-spouse-absent", 1.3),
                ("Married-AF-spouse", 0.1),
            ],
        )[0]
    if marital == "Married-civ-spouse":
        relationship = "Husband" if gender == "Male" else "Wife"
    elif age < 26 and rng.random() < 0.6:
        relationship = "Own-child"
    else:
        relationship = pick(
            rng,
            [
                ("Not-in-family", 55.0),
                ("Unmarried", 30.0),
                ("Other-relative", 6.0),
                ("Own-child", 9.0),
            ],
        )[0]
    race = pick(rng, RACE)[0]
    country = pick(rng, COUNTRY)[0]
    fnlwgt = int(np.clip(rng.lognormal(12.0, 0.5), 12285, 1484705))
    capital_gain = 0
    if rng.random() < 0.08:
        capital_gain = int(
            rng.choice(
                [2174, 3103, 4386, 5178, 7298, 7688, 15024, 99999],
                p=[0.15, 0.1, 0.1, 0.15, 0.15, 0.2, 0.13, 0.02],
            )
        )
    capital_loss = (
        int(rng.choice([1672, 1887, 1902, 1977, 2415])) if rng.random() < 0.05 else 0
    )
    hours = int(np.clip(rng.normal(40.5, 12.0), 1, 99))

    logit = (
        -2.6
        + 0.38 * (education_num - 10)
        + (2.0 if marital in ("Married-civ-spouse", "Married-AF-spouse") else 0.0)
        + 0.045 * (hours - 40)
        + 0.035 * (min(age, 60) - 38)
        + (3.0 if capital_gain >= 5000 else 0.0)
        + occupation_effect
    )
    label = ">50K" if logit + rng.logistic(scale=0.6) > 0 else "<=50K"
    values = [
        age,
        workclass,
        fnlwgt,
        education,
        education_num,
        marital,
        occupation,
        relationship,
        race,
        gender,
        capital_gain,
        capital_loss,
        hours,
        country,
        label,
    ]
    return ", ".join(str(v) for v in values)


def main():
    rng = np.random.default_rng(SEED)
    os.makedirs(os.path.join(HERE, "data"), exist_ok=True)
    for name, count in (("adult.data.csv", NUM_TRAIN), ("adult.test.csv", NUM_TEST)):
        rows = [row(rng) for _ in range(count)]
        with open(os.path.join(HERE, "data", name), "w") as f:
            f.write("\n".join(rows) + "\n")
        positives = sum(r.endswith(">50K") for r in rows)
        print(f"{name}: {count} rows, {positives / count:.3f} >50K")


if __name__ == "__main__":
    main()
