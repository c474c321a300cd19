#define MAX_ITEMS 10

struct point {
    int x;
    int y;
};

int add(int a, int b);
