/* fleet-mpi-bw.c — a plain MPI pair bandwidth test, the method of OSU's
 * osu_bw / osu_bibw, for scripts/compare-peers-fleet.sh to hold bwscope's
 * MPI pair figures against when OSU is not built.
 *
 *   mpirun -np 2 fleet-mpi-bw SIZE WINDOW ITERS [bidir]
 *
 * Per iteration: rank 0 posts WINDOW MPI_Isend of SIZE bytes, rank 1
 * WINDOW MPI_Irecv, both MPI_Waitall, then rank 1 answers with a 4-byte
 * ack (osu_bw). With "bidir" both ranks post WINDOW receives and WINDOW
 * sends at once and wait for all (osu_bibw), and the figure is both
 * directions together. ITERS/10 (at least 2) warm-up iterations are not
 * timed. Prints one line: SIZE WINDOW ITERS MODE GB/s (10^9 bytes/s). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 4 || size != 2) {
        if (rank == 0) fprintf(stderr, "usage: mpirun -np 2 %s SIZE WINDOW ITERS [bidir]\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    long bytes = atol(argv[1]);
    int window = atoi(argv[2]), iters = atoi(argv[3]);
    int bidir = argc > 4 && strcmp(argv[4], "bidir") == 0;
    int skip = iters / 10 > 2 ? iters / 10 : 2;
    char *sbuf = malloc(bytes), *rbuf = malloc(bytes * window);
    for (long i = 0; i < bytes; i++) sbuf[i] = (char)(i * 131 + rank);
    memset(rbuf, 0, bytes * window);
    MPI_Request *req = malloc(sizeof(MPI_Request) * 2 * window);
    int peer = 1 - rank, ack = 0;
    double t0 = 0;
    for (int it = 0; it < iters + skip; it++) {
        if (it == skip) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
        }
        int n = 0;
        if (bidir || rank == 1)
            for (int w = 0; w < window; w++)
                MPI_Irecv(rbuf + w * bytes, bytes, MPI_CHAR, peer, 100, MPI_COMM_WORLD, &req[n++]);
        if (bidir || rank == 0)
            for (int w = 0; w < window; w++)
                MPI_Isend(sbuf, bytes, MPI_CHAR, peer, 100, MPI_COMM_WORLD, &req[n++]);
        MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
        if (!bidir) {
            if (rank == 1)
                MPI_Send(&ack, 1, MPI_INT, 0, 101, MPI_COMM_WORLD);
            else
                MPI_Recv(&ack, 1, MPI_INT, 1, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    double t = MPI_Wtime() - t0;
    if (rank == 0) {
        double moved = (double)bytes * window * iters * (bidir ? 2 : 1);
        printf("%ld %d %d %s %.4f\n", bytes, window, iters, bidir ? "bidir" : "uni", moved / t / 1e9);
    }
    free(sbuf);
    free(rbuf);
    free(req);
    MPI_Finalize();
    return 0;
}
