"""Rows of float32 beliefs for the table of a row's few distinct values that the row sort
and the counting metrics keep from one row to the next (``_ext/core/few_distinct.h``)."""
import numpy as np

#: The multiplier of a float32 value's bits whose top six bits are its slot in the table.
SLOT_MULTIPLIER = 0x3C6EF362


def table_slots(values):
    """The table slot of each float32 value."""
    bits = np.asarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return (bits * SLOT_MULTIPLIER) % 2**32 >> 26


def rows_across_the_kept_table(rng, n_rows, q):
    """n_rows rows of q float32 beliefs, in turn: few values from a pool (1 to 32), a subset
    of the last row's values, values that share one slot beside others, more than 32
    values (another path; the table emptied), and the last row's values again."""
    pool = rng.standard_normal(400).astype(np.float32)
    slots = table_slots(pool)
    crowded = pool[slots == np.bincount(slots).argmax()]  # values sharing one slot
    assert len(crowded) >= 3
    rows, last = [], pool[:20]
    for i in range(n_rows):
        kind = i % 6
        if kind == 0:
            values = rng.choice(pool, rng.choice([1, 5, 20, 31, 32]), replace=False)
        elif kind == 1:
            values = rng.choice(last, max(1, len(last) // 2), replace=False)
        elif kind == 2:
            values = np.r_[crowded[:rng.integers(2, len(crowded) + 1)], pool[:5]]
        elif kind == 3:
            values = rng.choice(pool, rng.choice([33, 45]), replace=False)
        else:
            values = last
        rows.append(rng.choice(values, size=q))
        last = np.unique(rows[-1])
    return np.array(rows, dtype=np.float32)
