"""Check digits of Korean registration numbers and of ISINs, written once for the declared `code` columns and the
generators alike."""

from __future__ import annotations


def check_digit(digits: str, rule: str) -> str:
    """The check digit appended to a code (every non-digit is ignored, but for `isin`)."""
    if rule == "isin":  # ISIN (ISO 6166): letters to numbers (A=10 ... Z=35), then Luhn
        return check_digit("".join(str(int(ch, 36)) for ch in digits), "luhn")
    ds = [int(c) for c in digits if c.isdigit()]
    if rule == "luhn":
        total = 0
        for i, d in enumerate(reversed(ds)):
            if i % 2 == 0:
                d *= 2
                d -= 9 if d > 9 else 0
            total += d
        return str((10 - total % 10) % 10)
    if rule == "mod10":  # weights 1,2,1,2... (법인등록번호)
        total = sum(d * (1 if i % 2 == 0 else 2) for i, d in enumerate(ds))
        return str((10 - total % 10) % 10)
    # brn: 사업자등록번호, weights 1,3,7,1,3,7,1,3,5 over the first nine digits
    weights = (1, 3, 7, 1, 3, 7, 1, 3, 5)
    nine = (ds + [0] * 9)[:9]
    total = sum(d * w for d, w in zip(nine, weights, strict=True)) + (nine[8] * 5) // 10
    return str((10 - total % 10) % 10)
