"""Writes taxifare_feateng_train.csv / taxifare_feateng_valid.csv (seeded).

Stand-ins for the CSV shards the training-data-analyst feature-engineering
notebook (courses/machine_learning/feateng/feateng.ipynb) exports from
BigQuery's nyc-tlc:yellow.trips with Dataflow, which need a GCP project.
Same columns, no header, as its `to_csv` writes them:

    fare_amount,dayofweek,hourofday,pickuplon,pickuplat,dropofflon,dropofflat,passengers,key

dayofweek is the notebook's day name ('Sun', 'Mon', 'Tue', ... 'Sat'),
hourofday 0-23, coordinates in Manhattan's range (the course's taxi-train.csv:
lon -74.01..-73.94, lat 40.71..40.79 for 90% of rides), passengers 1.0-6.0
mostly 1, key the timestamp-and-coordinates string. The fare is learnable:
about 3.8 + 217 * euclidean distance in degrees (the fit of the course's
real taxi-train.csv, r = 0.90), plus a day-and-hour surcharge (weekday rush
hours +4, nights +2.5, weekends -1.5: what the wide part's day x hour cross
can learn in a few steps) and noise; at least 2.5 as the query keeps.

    python tests/programs/data/generate_taxifare_feateng.py
"""

import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]


def rows(count, rng):
    for _ in range(count):
        day = int(rng.randint(0, 7))
        hour = int(rng.randint(0, 24))
        plon = rng.normal(-73.982, 0.018)
        plat = rng.normal(40.752, 0.022)
        dist = float(np.clip(rng.lognormal(np.log(0.021), 0.75), 0.002, 0.25))
        angle = rng.uniform(0, 2 * np.pi)
        dlon = plon + dist * np.cos(angle)
        dlat = plat + dist * np.sin(angle)
        passengers = float(rng.choice([1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 5, 6]))
        weekday = day in range(1, 6)
        surcharge = 4.0 if (weekday and hour in (8, 9, 17, 18, 19)) else 0.0
        surcharge += 2.5 if hour < 6 else 0.0
        surcharge -= 1.5 if not weekday else 0.0
        fare = 3.8 + 217.0 * dist + surcharge + rng.normal(0, 1.2)
        fare = round(max(2.5, fare), 1)
        year, month = int(rng.randint(9, 16)), int(rng.randint(1, 13))
        mday, minute = int(rng.randint(1, 29)), int(rng.randint(0, 60))
        stamp = f"20{year:02d}-{month:02d}-{mday:02d} {hour:02d}:{minute:02d}:00.000000"
        key = f"{stamp}{plon:.4f}{plat:.4f}{dlat:.4f}{dlon:.4f}"
        yield (
            f"{fare},{DAYS[day]},{hour},{plon:.6f},{plat:.6f},"
            f"{dlon:.6f},{dlat:.6f},{passengers},{key}"
        )


def main():
    rng = np.random.RandomState(2020)
    for name, count in (("train", 1000), ("valid", 250)):
        path = os.path.join(HERE, f"taxifare_feateng_{name}.csv")
        with open(path, "w") as handle:
            for line in rows(count, rng):
                handle.write(line + "\n")


if __name__ == "__main__":
    main()
