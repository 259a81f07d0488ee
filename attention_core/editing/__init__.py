"""Pre- and post-editing of translations: names, numbers and rare words carried through the model."""
