"""The record model and the component contracts: the ground every layer imports; it imports
nothing of Sounding above it."""
