"""Tournaments between bots: schedules, duplicate deals, runners, ratings, stats, SPRT, reports."""
