"""`prewrite adapt`: LoRA self-distillation that teaches a model to commit early on partial specs.

The seed's section 7: given only a prefix of a docstring, the model is supervised with the
answer it gives to the complete docstring, so that its drafts survive more spec updates.
"""
