/* Sizes of the USB PD decoder's types as this C compiler lays them out, for the Rust
 * wrapper (hostd/crates/pd): it allocates the decoder opaquely with the first, and its
 * tests check its mirrors of the others against them. */
#include <stddef.h>

#include "throttlescope/pd_decode.h"

/* The decoder's alignment: the offset of a decoder placed after a single char. */
struct ts_pd_rs_align {
    char c;
    ts_pd_decoder d;
};

size_t ts_pd_rs_size(unsigned what)
{
    switch (what) {
    case 0: return sizeof(ts_pd_decoder);
    case 1: return sizeof(ts_pd_msg);
    case 2: return sizeof(ts_pd_header);
    case 3: return sizeof(ts_pd_pdo);
    case 4: return sizeof(ts_pd_rdo);
    case 5: return sizeof(ts_pd_vdm);
    case 6: return sizeof(ts_pd_contract);
    case 7: return sizeof(ts_pd_counters);
    case 8: return sizeof(ts_pd_config);
    default: return 0;
    }
}

size_t ts_pd_rs_decoder_align(void)
{
    return offsetof(struct ts_pd_rs_align, d);
}
