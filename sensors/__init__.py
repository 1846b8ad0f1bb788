"""Sensor models, message schema and virtual sensors."""
