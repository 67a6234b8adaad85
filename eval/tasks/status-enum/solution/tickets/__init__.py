"""A small ticket tracker."""
