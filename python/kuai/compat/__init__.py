# SPDX-License-Identifier: Apache-2.0
"""Drop-in replacements for other packages' APIs (kuai.compat.gmssl)."""
