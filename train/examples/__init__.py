"""Small, self-contained training scripts on the project's environments (CleanRL style: one file each)."""
