/* bcryptprimitives.dll for Wine 8.0, which lacks it: Rust's standard library
 * on Windows takes its random numbers from ProcessPrng, exported by this DLL
 * since Windows 10. This one forwards to RtlGenRandom (advapi32's
 * SystemFunction036), which Wine has. Only for running tests under Wine;
 * real Windows has its own. Built by scripts/windows/test.sh. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG n = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!SystemFunction036(data, n))
            return FALSE;
        data += n;
        len -= n;
    }
    return TRUE;
}
