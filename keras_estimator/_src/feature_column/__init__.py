"""Feature columns on Keras 3: `DenseFeatures` and the canned parse-example specs."""
