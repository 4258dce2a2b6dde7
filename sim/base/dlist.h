/*
 * dlist: a doubly-linked list over the indices of an array whose
 * elements carry their own links (struct link at a fixed offset): the KV
 * pool's free front and its CPU tier's LRU. Static inline: popping a free
 * block is on every allocation's path.
 *
 * What it owns: nothing allocated; the array is the caller's.
 */
#ifndef SERVESIM_DLIST_H
#define SERVESIM_DLIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Links of a doubly-linked list over indices. */
struct link {
	int32_t prev, next;
};

/* A doubly-linked list over the indices of an array whose elements hold
 * their links at base + i * stride (a block's links sit next to its
 * other fields: one cache line per block). The head's prev and the
 * tail's next are never read (the list's own head and tail say where it
 * ends), so taking the head off writes nothing into the next element:
 * popping a free block touches that block's line alone. */
struct dlist {
	char *base;
	size_t stride;
	int32_t head, tail;
	int64_t len;
};

static inline struct link *dlist_links(const struct dlist *l, int32_t i)
{
	return (struct link *)(l->base + (size_t)i * l->stride);
}

static inline void dlist_init(struct dlist *l, void *base, size_t stride)
{
	l->base = base;
	l->stride = stride;
	l->head = l->tail = -1;
	l->len = 0;
}

static inline void dlist_unlink(struct dlist *l, int32_t i)
{
	struct link *x = dlist_links(l, i);
	bool head = l->head == i, tail = l->tail == i;
	if (head)
		l->head = tail ? -1 : x->next;
	else
		dlist_links(l, x->prev)->next = x->next;
	if (tail)
		l->tail = head ? -1 : x->prev;
	else if (!head)
		dlist_links(l, x->next)->prev = x->prev;
	l->len--;
}

static inline void dlist_push_back(struct dlist *l, int32_t i)
{
	struct link *x = dlist_links(l, i);
	x->prev = l->tail;
	if (l->tail >= 0)
		dlist_links(l, l->tail)->next = i;
	else
		l->head = i;
	l->tail = i;
	l->len++;
}

static inline void dlist_push_front(struct dlist *l, int32_t i)
{
	struct link *x = dlist_links(l, i);
	x->next = l->head;
	if (l->head >= 0)
		dlist_links(l, l->head)->prev = i;
	else
		l->tail = i;
	l->head = i;
	l->len++;
}

#endif
