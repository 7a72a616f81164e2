! ring.F90 - an ordinary Fortran MPI program (use mpi, or use mpi_f08
! when built with -DWEFT_F08): a token goes NTIMES
! around the ring with MPI_SEND/MPI_RECV, then MPI_ALLREDUCE and
! MPI_BARRIER. A wrong token or sum stops it with status 1. With
! WEFT_TEST_EXPECT_DIR set, each rank writes there rank-N.json: what a
! trace of it must hold, in the format of every.c (read by
! tests/check_mpi.py; regions are named after the C functions).
! `ring abort`: rank 0 calls MPI_ABORT with error code 5 at once, the
! others wait in MPI_BARRIER until the launcher ends them (mpirun must
! end with status 5, traced as untraced).
program ring
#ifdef WEFT_F08
    use mpi_f08
#else
    use mpi
#endif
    implicit none
    integer, parameter :: ntimes = 5
    integer :: ierr, rank, nprocs, left, right, i, token, total, u, dlen
#ifdef WEFT_F08
    type(MPI_Status) :: status
#define SOURCE_OF(st) st%MPI_SOURCE
#else
    integer :: status(MPI_STATUS_SIZE)
#define SOURCE_OF(st) st(MPI_SOURCE)
#endif
    character(len=4096) :: dir
    character(len=16) :: mode

    call MPI_INIT(ierr)
    call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
    call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
    right = mod(rank + 1, nprocs)
    left = mod(rank + nprocs - 1, nprocs)
    call get_command_argument(1, mode)
    if (mode == 'abort') then
        if (rank == 0) call MPI_ABORT(MPI_COMM_WORLD, 5, ierr)
        call MPI_BARRIER(MPI_COMM_WORLD, ierr)
        print '(a)', 'ring: MPI_ABORT returned'
        stop 1
    end if

    do i = 1, ntimes
        if (rank == 0) then
            token = 100 * i
            call MPI_SEND(token, 1, MPI_INTEGER, right, i, MPI_COMM_WORLD, ierr)
            call MPI_RECV(token, 1, MPI_INTEGER, left, i, MPI_COMM_WORLD, status, ierr)
            if (token /= 100 * i + nprocs - 1 .or. SOURCE_OF(status) /= left) then
                print '(a,i0,a,i0)', 'ring: rank 0 got token ', token, ' in round ', i
                call MPI_ABORT(MPI_COMM_WORLD, 1, ierr)
            end if
        else
            call MPI_RECV(token, 1, MPI_INTEGER, left, i, MPI_COMM_WORLD, status, ierr)
            token = token + 1
            call MPI_SEND(token, 1, MPI_INTEGER, right, i, MPI_COMM_WORLD, ierr)
        end if
    end do

    call MPI_ALLREDUCE(rank, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (total /= nprocs * (nprocs - 1) / 2) then
        print '(a,i0,a,i0)', 'ring: rank ', rank, ': MPI_ALLREDUCE gave ', total
        call MPI_ABORT(MPI_COMM_WORLD, 1, ierr)
    end if
    call MPI_BARRIER(MPI_COMM_WORLD, ierr)
    call MPI_FINALIZE(ierr)

    call get_environment_variable('WEFT_TEST_EXPECT_DIR', dir, dlen)
    if (dlen > 0) then
        call write_expectation(dir(1:dlen))
    end if
    if (rank == 0) print '(a,i0,a)', 'ring: ok (', nprocs, ' ranks)'

contains

    subroutine write_expectation(d)
        character(len=*), intent(in) :: d
        character(len=32) :: name
        integer :: k

        write (name, '(a,i0,a)') '/rank-', rank, '.json'
        open (newunit=u, file=d//trim(name), status='replace', action='write')
        write (u, '(a,i0,a,i0,a)') '{"program":"ring","rank":', rank, ',"size":', nprocs, ','
        write (u, '(a,i0,a,i0,a)') '"events":{"ProgramBegin":1,"ProgramEnd":1,"MpiSend":', &
            ntimes, ',"MpiRecv":', ntimes, ',"MpiCollectiveBegin":2,"MpiCollectiveEnd":2},'
        write (u, '(a,i0,a,i0,a)') '"calls":{"MPI_Init":1,"MPI_Comm_rank":1,' // &
            '"MPI_Comm_size":1,"MPI_Send":', ntimes, ',"MPI_Recv":', ntimes, ',' // &
            '"MPI_Allreduce":1,"MPI_Barrier":1,"MPI_Finalize":1},'
        write (u, '(a)', advance='no') '"sends":['
        do k = 1, ntimes
            if (k > 1) write (u, '(a)', advance='no') ','
            write (u, '(a,i0,a,i0,a)', advance='no') '["MPI_COMM_WORLD",', right, ',', k, ',4]'
        end do
        write (u, '(a)') '],'
        write (u, '(a)', advance='no') '"recvs":['
        do k = 1, ntimes
            if (k > 1) write (u, '(a)', advance='no') ','
            write (u, '(a,i0,a,i0,a)', advance='no') '["MPI_COMM_WORLD",', left, ',', k, ',4]'
        end do
        write (u, '(a)') '],'
        write (u, '(a)') '"collectives":[["MPI_COMM_WORLD","ALLREDUCE",null],' // &
            '["MPI_COMM_WORLD","BARRIER",null]],'
        write (u, '(a)', advance='no') '"comms":[{"name":"MPI_COMM_WORLD","members":['
        do k = 0, nprocs - 1
            if (k > 0) write (u, '(a)', advance='no') ','
            write (u, '(i0)', advance='no') k
        end do
        write (u, '(a)') ']}]}'
        close (u)
    end subroutine write_expectation

end program ring
