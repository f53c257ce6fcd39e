"""Writes california_housing_train.csv (seeded), a small stand-in.

The training-data-analyst "art and science of ML" notebooks read
https://storage.googleapis.com/ml_universities/california_housing_train.csv
(the 1990 census block groups, 17000 rows). This file has the same header
and columns, each in the original's range and format (six decimals):

    longitude,latitude,housing_median_age,total_rooms,total_bedrooms,
    population,households,median_income,median_house_value

longitude -124.3..-114.3, latitude 32.5..42 (Bay Area, Los Angeles and
inland blocks), housing_median_age 1..52, households lognormal around 409,
rooms / bedrooms / persons per household around 5.4 / 1.07 / 2.9,
median_income 0.5..15 (tens of thousands of dollars), median_house_value
14999..500001 (capped as the census file is). The value is learnable: about
45000 per unit of median_income, more on the coast, less for old blocks
inland, plus noise.

    python tests/programs/data/generate_california_housing.py
"""

import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
HEADER = (
    '"longitude","latitude","housing_median_age","total_rooms","total_bedrooms",'
    '"population","households","median_income","median_house_value"'
)


def main(count=1000, seed=1990):
    rng = np.random.RandomState(seed)
    lines = [HEADER]
    for _ in range(count):
        region = rng.choice(3, p=[0.3, 0.4, 0.3])  # Bay Area, Los Angeles, inland
        if region == 0:
            lon, lat, coast = rng.normal(-122.2, 0.25), rng.normal(37.7, 0.3), 70000.0
        elif region == 1:
            lon, lat, coast = rng.normal(-118.2, 0.35), rng.normal(34.05, 0.25), 50000.0
        else:
            lon, lat, coast = rng.uniform(-121.5, -114.5), rng.uniform(33.0, 41.5), 0.0
        lon, lat = float(np.clip(lon, -124.3, -114.3)), float(np.clip(lat, 32.5, 42.0))
        age = float(rng.randint(1, 53))
        households = float(np.clip(round(rng.lognormal(np.log(409), 0.6)), 2, 6000))
        rooms = households * float(np.clip(rng.normal(5.4, 1.2), 1.5, 12))
        bedrooms = households * float(np.clip(rng.normal(1.07, 0.12), 0.6, 2.5))
        population = households * float(np.clip(rng.normal(2.9, 0.7), 1.0, 8.0))
        income = float(np.clip(rng.lognormal(np.log(3.5), 0.45), 0.4999, 15.0001))
        value = (
            20000.0 + 45000.0 * income + coast
            - (700.0 * age if region == 2 else 0.0)
            + rng.normal(0, 40000.0)
        )
        value = float(np.clip(round(value, -2), 14999.0, 500001.0))
        fields = [
            lon, lat, age, round(rooms), round(bedrooms), round(population),
            households, round(income, 4), value,
        ]
        lines.append(",".join(f"{x:.6f}" for x in fields))
    with open(os.path.join(HERE, "california_housing_train.csv"), "w") as handle:
        handle.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
