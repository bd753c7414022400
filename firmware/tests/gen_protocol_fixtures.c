/* Writes the protocol test vectors to a directory: <name>.bin (the frame,
 * delimiter included), <name>.json (the same frame in hex plus the decoded
 * message), index.json (the vector names in order) and limits.json (the
 * schema's largest message each way, which a host's decoder must accept).
 * Usage: gen_protocol_fixtures DIR */
#include <stdio.h>
#include <string.h>

#include "protocol_vectors.h"

static int write_file(const char *dir, const char *name, const char *ext, const void *data,
                      size_t len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s%s", dir, name, ext);
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        perror(path);
        return 1;
    }
    size_t w = fwrite(data, 1, len, f);
    if (fclose(f) != 0 || w != len) {
        fprintf(stderr, "could not write %s\n", path);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_protocol_fixtures DIR\n");
        return 2;
    }
    static char json[1 << 16];
    static uint8_t frame[TS_PROBE_FRAME_MAX];
    static char index_json[4096];
    size_t ilen = (size_t)snprintf(index_json, sizeof index_json, "[");
    for (size_t i = 0; i < ts_vector_count(); i++) {
        static ts_vector v;
        size_t n = 0;
        ts_vector_build(i, &v);
        if (ts_vector_frame(&v, frame, sizeof frame, &n) != 0 ||
            !ts_vector_json(&v, frame, n, json, sizeof json)) {
            fprintf(stderr, "vector %s failed to encode\n", v.name);
            return 1;
        }
        if (write_file(argv[1], v.name, ".bin", frame, n) != 0 ||
            write_file(argv[1], v.name, ".json", json, strlen(json)) != 0) {
            return 1;
        }
        ilen += (size_t)snprintf(index_json + ilen, sizeof index_json - ilen, "%s\n  \"%s\"",
                                 i ? "," : "", v.name);
    }
    snprintf(index_json + ilen, sizeof index_json - ilen, "\n]\n");
    char limits[256];
    ts_vector_limits_json(limits, sizeof limits);
    if (write_file(argv[1], "limits", ".json", limits, strlen(limits)) != 0) {
        return 1;
    }
    return write_file(argv[1], "index", ".json", index_json, strlen(index_json));
}
