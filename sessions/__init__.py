"""One cache-stable conversation with DeepSeek: wire types, client, tokens, prices, prefix, log, tools, repair.

Imports nothing else of ours (DESIGN §2).
"""
