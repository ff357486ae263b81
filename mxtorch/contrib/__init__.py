"""Experimental contributions"""
