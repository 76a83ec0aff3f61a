"""Tiny Hugging Face model folders for the tests of hetero convert hf.

Written with the standard library only (no numpy, torch or transformers):
safetensors files, tokenizer.json (byte-level BPE) and tokenizer.model
(SentencePiece protobuf), configs, and a reference forward pass of each
architecture with Hugging Face's semantics.
"""
