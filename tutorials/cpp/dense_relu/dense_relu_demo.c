/* Step 2 of the example: the product. A plain C program that calls the exported kernel through
 * the generated header and checks it against straightforward loops. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "dense_relu.h"
#include "dense_relu_tuned.h"

enum { BATCH = 19, IN = 256, OUT = 128 };

static float reference(const float* x, const float* w, const float* b, int i, int j) {
    double acc = b[j];
    for (int k = 0; k < IN; ++k) acc += (double)x[i * IN + k] * w[k * OUT + j];
    return acc > 0 ? (float)acc : 0.0f;
}

int main(void) {
    float* x = malloc(sizeof(float) * BATCH * IN);
    float* w = malloc(sizeof(float) * IN * OUT);
    float* b = malloc(sizeof(float) * OUT);
    float* out = malloc(sizeof(float) * BATCH * OUT);
    if (!x || !w || !b || !out) return 1;
    srand(7);
    for (int i = 0; i < BATCH * IN; ++i) x[i] = (float)rand() / RAND_MAX - 0.5f;
    for (int i = 0; i < IN * OUT; ++i) w[i] = (float)rand() / RAND_MAX - 0.5f;
    for (int j = 0; j < OUT; ++j) b[j] = (float)rand() / RAND_MAX - 0.5f;

    int status = dense_relu_call(x, w, b, out, BATCH);
    if (status != 0) {
        printf("dense_relu failed with status %d\n", status);
        return 1;
    }
    int active = 0;
    for (int i = 0; i < BATCH; ++i) {
        for (int j = 0; j < OUT; ++j) {
            float want = reference(x, w, b, i, j);
            if (fabsf(out[i * OUT + j] - want) > 1e-4f * (1.0f + fabsf(want))) {
                printf("mismatch at (%d, %d): %g, expected %g\n", i, j, out[i * OUT + j], want);
                return 1;
            }
            active += want > 0;
        }
    }
    printf("dense_relu: %d x %d outputs match the reference (%d active)\n", BATCH, OUT, active);

    /* The tuned kernel (batch 32, scheduled from the tuning log) on the first 32 rows. */
    float* x32 = malloc(sizeof(float) * 32 * IN);
    float* out32 = malloc(sizeof(float) * 32 * OUT);
    if (!x32 || !out32) return 1;
    for (int i = 0; i < 32 * IN; ++i) x32[i] = (float)rand() / RAND_MAX - 0.5f;
    status = dense_relu_tuned_call(x32, w, b, out32);
    if (status != 0) {
        printf("dense_relu_tuned failed with status %d\n", status);
        return 1;
    }
    for (int i = 0; i < 32; ++i) {
        for (int j = 0; j < OUT; ++j) {
            float want = reference(x32, w, b, i, j);
            if (fabsf(out32[i * OUT + j] - want) > 1e-4f * (1.0f + fabsf(want))) {
                printf("tuned mismatch at (%d, %d): %g, expected %g\n", i, j, out32[i * OUT + j],
                       want);
                return 1;
            }
        }
    }
    printf("dense_relu_tuned: 32 x %d outputs match the reference\n", OUT);
    free(x32);
    free(out32);
    free(x);
    free(w);
    free(b);
    free(out);
    return 0;
}
