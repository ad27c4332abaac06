"""Every state change of the product, as `<entity>_<verb>` functions."""
